import type { TemplateExample } from '@backstage/plugin-scaffolder-node';

/** Template steps that use the action, shown with it in the scaffolder's list of actions. */
export const examples: TemplateExample[] = [
  {
    description: 'Release version 1.4.2 everywhere the component runs',
    example: [
      'steps:',
      '  - id: fleet-release',
      '    action: fleet:release',
      '    input:',
      '      entityRef: component:default/${{ parameters.name }}',
      '      image: ghcr.io/acme/payments:1.4.2',
    ].join('\n'),
  },
  {
    description:
      'Release progressively: one cluster first, then the rest, 20 % then 100 % of the traffic',
    example: [
      'steps:',
      '  - id: fleet-release',
      '    action: fleet:release',
      '    input:',
      '      entityRef: component:default/${{ parameters.name }}',
      '      image: ghcr.io/acme/payments:1.5.0',
      '      strategy:',
      '        waves:',
      '          - clusters: [sim-1]',
      '          - percent: 100',
      '        canary:',
      '          steps:',
      '            - setWeight: 20',
      '            - pause: { duration: 1m }',
      '            - setWeight: 100',
      '        rollback: { enabled: true, timeout: 15m }',
    ].join('\n'),
  },
];

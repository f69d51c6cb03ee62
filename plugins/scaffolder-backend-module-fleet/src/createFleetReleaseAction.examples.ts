import type { TemplateExample } from '@backstage/plugin-scaffolder-node';

/** A template step running the action, with the lines of its input after the entity ref. */
function releaseStep(...input: string[]): string {
  return [
    'steps:',
    '  - id: fleet-release',
    '    action: fleet:release',
    '    input:',
    '      entityRef: component:default/${{ parameters.name }}',
    ...input.map(line => `      ${line}`),
  ].join('\n');
}

/** Template steps that use the action, shown with it in the scaffolder's list of actions. */
export const examples: TemplateExample[] = [
  {
    description: 'Release version 1.4.2 everywhere the component runs',
    example: releaseStep('image: ghcr.io/acme/payments:1.4.2'),
  },
  {
    description:
      'Release progressively: one cluster first, then the rest, 20 % then 100 % of the traffic',
    example: releaseStep(
      'image: ghcr.io/acme/payments:1.5.0',
      'strategy:',
      '  waves:',
      '    - clusters: [sim-1]',
      '    - percent: 100',
      '  canary:',
      '    steps:',
      '      - setWeight: 20',
      '      - pause: { duration: 1m }',
      '      - setWeight: 100',
      '  rollback: { enabled: true, timeout: 15m }',
    ),
  },
];

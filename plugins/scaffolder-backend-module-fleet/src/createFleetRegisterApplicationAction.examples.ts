import type { TemplateExample } from '@backstage/plugin-scaffolder-node';

/** Template steps that use the action, shown with it in the scaffolder's list of actions. */
export const examples: TemplateExample[] = [
  {
    description: 'Register the new component, to run 2 replicas on sim-1',
    example: [
      'steps:',
      '  - id: fleet-register',
      '    action: fleet:application:register',
      '    input:',
      '      entityRef: component:default/${{ parameters.name }}',
      '      spec: { image: ${{ parameters.image }}, replicas: 2, port: 8000 }',
      '      placement: { clusters: [sim-1] }',
    ].join('\n'),
  },
];

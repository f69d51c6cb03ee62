import type { TemplateExample } from '@backstage/plugin-scaffolder-node';

/** Template steps that use the action, shown with it in the scaffolder's list of actions. */
export const examples: TemplateExample[] = [
  {
    description: 'Deploy the new component to sim-1',
    example: [
      'steps:',
      '  - id: fleet-deploy',
      '    action: fleet:deploy',
      '    input:',
      '      entityRef: component:default/${{ parameters.name }}',
      '      cluster: sim-1',
    ].join('\n'),
  },
];

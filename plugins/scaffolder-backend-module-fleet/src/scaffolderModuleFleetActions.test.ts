import { startTestBackend } from '@backstage/backend-test-utils';
import { scaffolderActionsExtensionPoint } from '@backstage/plugin-scaffolder-node';
import { scaffolderModuleFleetActions } from './scaffolderModuleFleetActions';

describe('scaffolderModuleFleetActions', () => {
  it('adds its three actions to the scaffolder', async () => {
    const addActions = jest.fn();
    await startTestBackend({
      extensionPoints: [[scaffolderActionsExtensionPoint, { addActions }]],
      features: [scaffolderModuleFleetActions],
    });
    expect(
      addActions.mock.calls.flat().map((a: { id: string }) => a.id),
    ).toEqual(['fleet:application:register', 'fleet:deploy', 'fleet:release']);
  });
});

import type { NotificationService } from '@backstage/plugin-notifications-node';
import { createReleaseGateNotices } from './ReleaseGateNotifier';

const UUID = '0b7a4a0e-1f7e-4c38-9a55-5d3f4b1c2e9a';

function recorder() {
  const sent: Array<Parameters<NotificationService['send']>[0]> = [];
  const notifications: NotificationService = {
    send: async options => {
      sent.push(options);
    },
  };
  return { sent, notices: createReleaseGateNotices({ notifications }) };
}

describe('release gate notifications', () => {
  it('name people and groups by their names, carry no release id, and share one scope per component', async () => {
    const { sent, notices } = recorder();
    await notices.approvalWanted({
      releaseId: UUID,
      entityRef: 'component:default/payments',
      stage: 'prod',
      author: 'user:default/guest via scaffolder',
      groups: ['group:default/release-managers'],
      what: 'ghcr.io/acme/payments:1.6.0',
    });
    await notices.decided({
      releaseId: UUID,
      entityRef: 'component:default/payments',
      author: 'user:default/guest',
      decider: 'user:default/carol',
      decision: 'APPROVED',
      comment: null,
      started: true,
    });
    expect(sent.map(s => s.payload)).toEqual([
      expect.objectContaining({
        title: 'Fleet: a release of payments waits for your approval',
        description:
          "guest via scaffolder released ghcr.io/acme/payments:1.6.0: it starts once release-managers approves it. Open the component's page to decide.",
        link: '/catalog/default/component/payments',
        // Its own scope: news of another release never replaces a request for approval.
        scope: 'fleet:releases:component:default/payments:approval',
      }),
      expect.objectContaining({
        title: 'Fleet: carol approved your release of payments',
        description: 'The release has started.',
        severity: 'normal',
        scope: 'fleet:releases:component:default/payments',
      }),
    ]);
    expect(JSON.stringify(sent)).not.toContain(UUID);
  });
});

import type { NotificationService } from '@backstage/plugin-notifications-node';
import { parseEntityRef } from '@backstage/catalog-model';
import {
  actorWords,
  entityPath,
  FLEET_NOTIFICATION_TOPIC,
  releaseScope,
} from './FleetNotifier';
import { authorOf, type ReleaseGateNotices } from '../stages/gates';

/**
 * Backstage notifications about releases waiting at a gate: the approver groups hear that a
 * release waits for them (the notifications service resolves a group to its members), and a
 * release's author hears when someone approved or rejected it. A request for approval has a
 * scope of its own per component (news of another release, such as a rollback, never replaces
 * it; a newer request does); the decisions share the component's release scope, so the newest
 * news replaces the older notice instead of piling up beside it. No release id: the link opens
 * the component's page, where the release is.
 */
export function createReleaseGateNotices(options: {
  notifications: NotificationService;
}): ReleaseGateNotices {
  const { notifications } = options;
  return {
    async approvalWanted(notice) {
      const name = parseEntityRef(notice.entityRef).name;
      await notifications.send({
        recipients: {
          type: 'entity',
          entityRef: notice.groups,
          excludeEntityRef: authorOf(notice.author),
        },
        payload: {
          title: `Fleet: a release of ${name} waits for your approval`,
          description: `${actorWords(notice.author)} released ${
            notice.what
          }: it starts once ${notice.groups
            .map(g => actorWords(g))
            .join(', ')} approve${
            notice.groups.length === 1 ? 's' : ''
          } it. Open the component's page to decide.`,
          link: entityPath(notice.entityRef),
          severity: 'normal',
          topic: FLEET_NOTIFICATION_TOPIC,
          scope: `${releaseScope(notice.entityRef)}:approval`,
        },
      });
    },
    async decided(notice) {
      const author = authorOf(notice.author);
      if (!author.startsWith('user:')) return;
      const name = parseEntityRef(notice.entityRef).name;
      const verb = notice.decision === 'APPROVED' ? 'approved' : 'rejected';
      let outcome = 'The release waits on.';
      if (notice.decision === 'REJECTED') outcome = 'Nothing was applied.';
      else if (notice.started) outcome = 'The release has started.';
      await notifications.send({
        recipients: { type: 'entity', entityRef: author },
        payload: {
          title: `Fleet: ${actorWords(
            notice.decider,
          )} ${verb} your release of ${name}`,
          description: `${
            notice.comment ? `"${notice.comment}" ` : ''
          }${outcome}`,
          link: entityPath(notice.entityRef),
          severity: notice.decision === 'REJECTED' ? 'high' : 'normal',
          topic: FLEET_NOTIFICATION_TOPIC,
          scope: releaseScope(notice.entityRef),
        },
      });
    },
  };
}

import { usePermission } from '@backstage/plugin-permission-react';
import {
  fleetReleaseApprovePermission,
  fleetReleaseManagePermission,
  type Release,
  type ReleaseDecision,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Typography from '@material-ui/core/Typography';
import { useState } from 'react';
import {
  type SignedInUser,
  useUserEntityRef,
} from '../../hooks/useUserEntityRef';
import { PermittedButton, type PermissionState } from '../DeploymentActions';
import { RelativeTime } from '../RelativeTime';
import { useTableStyles } from '../tables';
import { DecisionDialog, type Decision } from './DecisionDialog';
import {
  approvalsText,
  gateStatusText,
  isAuthor,
  notApproverText,
  windowText,
} from './gateText';
import { releasedText } from './releaseText';
import { ActorName } from '../EntityName';

/** Why the author may not approve: the stage wants someone else's eyes on it. */
export const AUTHOR_APPROVAL_TEXT =
  'You started this release: someone else must approve it';

/** The approvals and rejections of a release, oldest first: who, what, why, when. */
export function GateDecisions(props: { decisions: ReleaseDecision[] }) {
  if (props.decisions.length === 0) return null;
  return (
    <Box component="ul" aria-label="Decisions" m={0} pl={2}>
      {props.decisions.map(d => (
        <Typography
          component="li"
          variant="body2"
          key={`${d.actor}-${d.at}`}
          data-decision={d.decision}
        >
          <ActorName actor={d.actor} />{' '}
          {d.decision === 'APPROVED' ? 'approved' : 'rejected'}
          {d.overrideFreeze && ', overriding the freeze window'}
          {d.comment && `: “${d.comment}”`} (<RelativeTime value={d.at} />)
        </Typography>
      ))}
    </Box>
  );
}

/** Why the user may not decide without `fleet.release.approve` on the component. */
const approveDeniedText = (componentName: string) =>
  `You are not allowed to approve or reject releases of ${componentName}`;

/** Whether the user may decide, and the tooltip that says why not. */
interface DecisionState {
  permission: PermissionState;
  deniedText: string;
}

/**
 * Whether someone other than the author may approve or reject, in the backend's order: the
 * `fleet.release.approve` permission; membership of one of the gate's approver groups (by the
 * token's claims: the backend reads the catalog and still decides); and for a gate naming no
 * group (a freeze window alone, which an approval overrides) the right to release the component.
 */
function decisionState(options: {
  release: Release;
  componentName: string;
  approve: PermissionState;
  manage: PermissionState;
  user: SignedInUser;
}): DecisionState {
  const { release, componentName, approve, manage, user } = options;
  const denied = (deniedText: string): DecisionState => ({
    permission: { loading: false, allowed: false },
    deniedText,
  });
  if (!approve.loading && !approve.allowed) {
    return denied(approveDeniedText(componentName));
  }
  const notApprover = notApproverText(release.gate, user.ownershipEntityRefs);
  if (notApprover) return denied(notApprover);
  const windowOnly = !!release.gate && !release.gate.approvals;
  if (windowOnly && !manage.loading && !manage.allowed) {
    return denied(
      `You are not allowed to release ${componentName}, so not to override its freeze window`,
    );
  }
  return {
    permission: {
      loading:
        approve.loading || user.loading || (windowOnly && manage.loading),
      allowed: true,
    },
    deniedText: '',
  };
}

/**
 * Approve and Reject: the author may reject (withdraw) their own release, never approve it;
 * anyone else only when `decisionState` lets them, so that they learn why before a 403.
 */
function DecisionButtons(props: {
  release: Release;
  componentName: string;
  onDecide: (decision: Decision) => void;
}) {
  const { release, componentName } = props;
  const approve = usePermission({
    permission: fleetReleaseApprovePermission,
    resourceRef: release.entityRef,
  });
  const manage = usePermission({
    permission: fleetReleaseManagePermission,
    resourceRef: release.entityRef,
  });
  const user = useUserEntityRef();
  const author = isAuthor(release.createdBy, user.userEntityRef);
  const others = decisionState({
    release,
    componentName,
    approve,
    manage,
    user,
  });
  // The author withdraws with the approve permission alone: no group or release right needed.
  const reject: DecisionState = author
    ? {
        permission: approve,
        deniedText: approveDeniedText(componentName),
      }
    : others;
  const approval: DecisionState = author
    ? {
        permission: { loading: false, allowed: false },
        deniedText: AUTHOR_APPROVAL_TEXT,
      }
    : others;
  return (
    <Box display="flex" flexWrap="wrap" style={{ gap: 8 }} mb={1}>
      <PermittedButton
        size="small"
        variant="contained"
        color="primary"
        permission={approval.permission}
        deniedText={approval.deniedText}
        onClick={() => props.onDecide('approve')}
      >
        Approve
      </PermittedButton>
      <PermittedButton
        size="small"
        variant="outlined"
        permission={reject.permission}
        deniedText={reject.deniedText}
        onClick={() => props.onDecide('reject')}
      >
        Reject
      </PermittedButton>
    </Box>
  );
}

/**
 * A release that waits before it starts: what it waits for (approvals, a freeze window), who must
 * approve and how many did, every decision so far, and Approve / Reject.
 */
export function WaitingRelease(props: {
  release: Release;
  componentName: string;
  onChanged: () => void;
}) {
  const classes = useTableStyles();
  const { release } = props;
  const [deciding, setDeciding] = useState<Decision>();
  const approvals = approvalsText(release.gate);
  const window = windowText(release.gate);
  return (
    <Box mb={2} aria-label="Waiting release" role="region">
      <Typography variant="body2" gutterBottom>
        <strong data-testid="fleet-release-status">
          {gateStatusText(release)}
        </strong>
        {' — '}
        <code className={classes.nowrap}>
          {releasedText(release) ?? 'current image'}
        </code>
        {release.stage && ` to stage ${release.stage}`}, started{' '}
        <RelativeTime value={release.createdAt} /> by{' '}
        <ActorName actor={release.createdBy} />
      </Typography>
      {approvals && (
        <Typography variant="body2" data-testid="fleet-release-approvals">
          Needs {approvals}
        </Typography>
      )}
      {window && (
        <Typography variant="body2" data-testid="fleet-release-window">
          Held by {window}
        </Typography>
      )}
      <GateDecisions decisions={release.gate?.decisions ?? []} />
      <Box mt={1}>
        <DecisionButtons
          release={release}
          componentName={props.componentName}
          onDecide={setDeciding}
        />
      </Box>
      {deciding && (
        <DecisionDialog
          decision={deciding}
          release={release}
          componentName={props.componentName}
          onClose={() => setDeciding(undefined)}
          onDecided={props.onChanged}
        />
      )}
    </Box>
  );
}

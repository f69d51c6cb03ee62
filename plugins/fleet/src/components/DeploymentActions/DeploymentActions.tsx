import type { Deployment } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Button, { ButtonProps } from '@material-ui/core/Button';
import Tooltip from '@material-ui/core/Tooltip';
import DeleteIcon from '@material-ui/icons/Delete';
import HistoryIcon from '@material-ui/icons/History';
import RestoreIcon from '@material-ui/icons/Restore';
import type { ReactElement } from 'react';
import { HistoryDialog } from './HistoryDialog';
import { RollbackDialog } from './RollbackDialog';
import { UndeployDialog } from './UndeployDialog';

/** What `usePermission` answered for one action. */
export interface PermissionState {
  loading: boolean;
  allowed: boolean;
}

/** The actions a deployment row offers. */
export type DeploymentAction = 'history' | 'rollback' | 'undeploy';

/**
 * A button the user may be denied: disabled while the permission is checked, and disabled with
 * `deniedText` as its tooltip when it is denied; disabled for another reason with
 * `disabledReason` as its tooltip (a disabled button always says why).
 */
export function PermittedButton(
  props: ButtonProps & {
    permission: PermissionState;
    deniedText: string;
    /** Why it is disabled, when it is for another reason than the permission. */
    disabledReason?: string;
  },
) {
  const { permission, deniedText, disabledReason, disabled, ...rest } = props;
  const denied = !permission.loading && !permission.allowed;
  let reason = '';
  if (denied) reason = deniedText;
  else if (disabled && disabledReason) reason = disabledReason;
  else if (permission.loading) reason = 'Checking your permissions…';
  // One shape whatever the answer: the button is not remounted when the permission's answer
  // arrives (or changes), and a disabled button gets no pointer events, so the span carries the
  // tooltip. An empty title shows no tooltip.
  return (
    <Tooltip title={reason}>
      <span>
        <Button {...rest} disabled={disabled || permission.loading || denied} />
      </span>
    </Tooltip>
  );
}

/** Why a deployment cannot be rolled back, if it cannot: it has no earlier revision. */
export function rollbackUnavailable(
  deployment: Deployment,
): string | undefined {
  if (deployment.revision > 1) return undefined;
  return `Nothing to roll back to: revision ${deployment.revision} is the only revision on ${deployment.cluster}`;
}

/**
 * History, Rollback and Undeploy for one deployment; none for a deployment being removed.
 */
export function DeploymentActions(props: {
  deployment: Deployment;
  componentName: string;
  permissions: { rollback: PermissionState; undeploy: PermissionState };
  onAction: (action: DeploymentAction) => void;
}) {
  const { deployment, componentName, permissions, onAction } = props;
  if (deployment.status === 'REMOVING') return null;
  const { cluster } = deployment;
  const buttons: Array<{
    action: DeploymentAction;
    label: string;
    name: string;
    icon: ReactElement;
    permission: PermissionState;
    deniedText: string;
    disabledReason?: string;
  }> = [
    {
      action: 'history',
      label: 'History',
      name: `History on ${cluster}`,
      icon: <HistoryIcon />,
      permission: { loading: false, allowed: true },
      deniedText: '',
    },
    {
      action: 'rollback',
      label: 'Rollback',
      name: `Rollback on ${cluster}`,
      icon: <RestoreIcon />,
      permission: permissions.rollback,
      deniedText: `You are not allowed to deploy ${componentName}, so not to roll it back either`,
      disabledReason: rollbackUnavailable(deployment),
    },
    {
      action: 'undeploy',
      label: 'Undeploy',
      name: `Undeploy from ${cluster}`,
      icon: <DeleteIcon />,
      permission: permissions.undeploy,
      deniedText: `You are not allowed to undeploy ${componentName}`,
    },
  ];
  return (
    <Box display="flex" flexWrap="wrap" style={{ gap: 4 }}>
      {buttons.map(b => (
        <PermittedButton
          key={b.action}
          size="small"
          startIcon={b.icon}
          aria-label={b.name}
          permission={b.permission}
          deniedText={b.deniedText}
          disabled={b.disabledReason !== undefined}
          disabledReason={b.disabledReason}
          onClick={() => onAction(b.action)}
        >
          {b.label}
        </PermittedButton>
      ))}
    </Box>
  );
}

/** The dialog of the action picked on a row. */
export function DeploymentActionDialog(props: {
  action: DeploymentAction;
  deployment: Deployment;
  componentName: string;
  onClose: () => void;
  onDone: () => void;
}) {
  const { action, ...rest } = props;
  switch (action) {
    case 'history':
      return <HistoryDialog {...rest} />;
    case 'rollback':
      return <RollbackDialog {...rest} />;
    case 'undeploy':
      return <UndeployDialog {...rest} />;
    default:
      return null;
  }
}

import type { Cluster } from '@cnp/plugin-fleet-common';
import ListItemText from '@material-ui/core/ListItemText';
import MenuItem from '@material-ui/core/MenuItem';
import TextField from '@material-ui/core/TextField';
import Tooltip from '@material-ui/core/Tooltip';
import { useRef, useState } from 'react';
import { deploymentReasonText, reasonParts } from '../StatusChip';

/**
 * A cluster's status reason, short enough for one line of a menu or a helper text: its words
 * (`Outage confirmed`), without the probe's raw error, which `fullClusterReason` gives.
 */
export function shortClusterReason(cluster: Pick<Cluster, 'statusReason'>) {
  return cluster.statusReason ? reasonParts(cluster.statusReason).words : '';
}

/** The whole reason, words, code and the probe's own error: what hovering shows. */
export function fullClusterReason(cluster: Pick<Cluster, 'statusReason'>) {
  return cluster.statusReason ? deploymentReasonText(cluster.statusReason) : '';
}

/** Why an OFFLINE cluster cannot be picked, in a few words. */
export function offlineText(cluster: Pick<Cluster, 'statusReason'>): string {
  return `Unavailable: ${shortClusterReason(cluster) || 'cluster is OFFLINE'}`;
}

/**
 * The helper text under the picker, about the cluster selected: its status, and a reason only
 * where it explains that status (an ONLINE cluster's last failed probe is not an outage yet).
 */
export function clusterHelperText(
  clusters: Cluster[],
  selected: Cluster | undefined,
): string {
  if (clusters.length === 0) return 'No clusters are registered yet';
  if (!selected) {
    return clusters.every(c => c.status === 'OFFLINE')
      ? 'Every cluster is OFFLINE: none can be deployed to now'
      : 'Pick a cluster';
  }
  const words = shortClusterReason(selected);
  switch (selected.status) {
    case 'ONLINE':
      return selected.statusReason?.startsWith('PROBE_FAILED')
        ? 'ONLINE: its last probe failed, not yet confirmed as an outage'
        : 'ONLINE';
    case 'UNKNOWN':
      return `UNKNOWN${
        words ? ` (${words})` : ''
      }: Fleet tries the deploy, and reports what the cluster answers`;
    default:
      return `${selected.status}${words ? ` — ${words}` : ''}`;
  }
}

/**
 * The Deploy dialog's cluster select. Its menu is never wider than the select (within the
 * dialog); each cluster says its status, an OFFLINE one is disabled with a short reason on one
 * line, its whole reason (the probe's error) shown on hover.
 */
export function ClusterPicker(props: {
  clusters: Cluster[];
  value: string;
  onChange: (cluster: string) => void;
  helperText: string;
}) {
  const field = useRef<HTMLDivElement>(null);
  const [menuWidth, setMenuWidth] = useState<number>();
  return (
    <TextField
      select
      fullWidth
      margin="normal"
      label="Cluster"
      ref={field}
      value={props.value}
      onChange={e => {
        const name = e.target.value as string;
        // An OFFLINE cluster cannot be picked, even by a click on its reason.
        if (props.clusters.find(c => c.name === name)?.status !== 'OFFLINE')
          props.onChange(name);
      }}
      SelectProps={{
        onOpen: () => setMenuWidth(field.current?.clientWidth || undefined),
        MenuProps: {
          disablePortal: false,
          PaperProps: {
            style: { maxWidth: menuWidth ?? 'min(600px, 90vw)' },
          },
        },
      }}
      inputProps={{ 'aria-label': 'Cluster' }}
      helperText={props.helperText}
    >
      {props.clusters.map(c => {
        const offline = c.status === 'OFFLINE';
        return (
          <MenuItem
            key={c.name}
            value={c.name}
            disabled={offline}
            data-cluster={c.name}
          >
            <ListItemText
              primary={`${c.name} — ${c.status}`}
              primaryTypographyProps={{ noWrap: true }}
              secondaryTypographyProps={{ noWrap: true, component: 'div' }}
              secondary={
                offline ? (
                  <Tooltip title={fullClusterReason(c) || offlineText(c)}>
                    {/* A disabled item takes no pointer events; this line does, for the tooltip
                    (a click on it picks nothing: see onChange). */}
                    <span style={{ pointerEvents: 'auto' }}>
                      {offlineText(c)}
                    </span>
                  </Tooltip>
                ) : (
                  c.endpoint
                )
              }
            />
          </MenuItem>
        );
      })}
    </TextField>
  );
}

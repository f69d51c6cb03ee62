import type { Cluster } from '@cnp/plugin-fleet-common';
import Checkbox from '@material-ui/core/Checkbox';
import FormControlLabel from '@material-ui/core/FormControlLabel';
import FormGroup from '@material-ui/core/FormGroup';
import FormHelperText from '@material-ui/core/FormHelperText';
import Tooltip from '@material-ui/core/Tooltip';
import { reasonParts } from '../StatusChip';

/** Why an OFFLINE cluster cannot be picked: a release skips it, with its status reason. */
export function offlineChoiceText(
  cluster: Pick<Cluster, 'name' | 'statusReason'>,
): string {
  const words = cluster.statusReason
    ? reasonParts(cluster.statusReason).words
    : '';
  return `${cluster.name} is OFFLINE${
    words ? ` (${words})` : ''
  }: a release skips it until it is back ONLINE`;
}

/**
 * A checkbox per cluster, named with its status; an OFFLINE cluster cannot be picked, and says
 * why (its tooltip, and a line under the boxes). The Deploy and Release dialogs both let the user
 * choose the clusters of a release with it.
 */
export function ClusterChoice(props: {
  clusters: Pick<Cluster, 'name' | 'status' | 'statusReason'>[];
  chosen: string[];
  onChange: (chosen: string[]) => void;
  row?: boolean;
}) {
  const { chosen, onChange } = props;
  const offline = props.clusters.filter(c => c.status === 'OFFLINE');
  return (
    <>
      <FormGroup
        row={props.row}
        role="group"
        aria-label="Clusters to release to"
      >
        {props.clusters.map(c => {
          const disabled = c.status === 'OFFLINE';
          return (
            <Tooltip key={c.name} title={disabled ? offlineChoiceText(c) : ''}>
              <FormControlLabel
                label={`${c.name} — ${c.status}`}
                disabled={disabled}
                control={
                  <Checkbox
                    checked={chosen.includes(c.name)}
                    onChange={e =>
                      onChange(
                        e.target.checked
                          ? [...chosen, c.name]
                          : chosen.filter(n => n !== c.name),
                      )
                    }
                  />
                }
              />
            </Tooltip>
          );
        })}
      </FormGroup>
      {offline.map(c => (
        <FormHelperText key={c.name}>{offlineChoiceText(c)}</FormHelperText>
      ))}
    </>
  );
}

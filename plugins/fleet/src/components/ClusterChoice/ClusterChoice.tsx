import type { Cluster } from '@cnp/plugin-fleet-common';
import Checkbox from '@material-ui/core/Checkbox';
import FormControlLabel from '@material-ui/core/FormControlLabel';
import FormGroup from '@material-ui/core/FormGroup';

/**
 * A checkbox per cluster, named with its status; an OFFLINE cluster cannot be picked. The
 * Deploy and Release dialogs both let the user choose the clusters of a release with it.
 */
export function ClusterChoice(props: {
  clusters: Pick<Cluster, 'name' | 'status'>[];
  chosen: string[];
  onChange: (chosen: string[]) => void;
  row?: boolean;
}) {
  const { chosen, onChange } = props;
  return (
    <FormGroup row={props.row} role="group" aria-label="Clusters to release to">
      {props.clusters.map(c => (
        <FormControlLabel
          key={c.name}
          label={`${c.name} — ${c.status}`}
          disabled={c.status === 'OFFLINE'}
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
      ))}
    </FormGroup>
  );
}

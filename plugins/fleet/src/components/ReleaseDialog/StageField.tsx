import type { StageStatus } from '@cnp/plugin-fleet-common';
import TextField from '@material-ui/core/TextField';

/**
 * What picking the stage means: its clusters, and what keeps it from its required version. With
 * none picked, a release to a cluster of a stage that requires another is still that stage's
 * (the API checks it the same way): the text does not promise a way around it.
 */
function stageHelper(stages: StageStatus[], stage?: StageStatus): string {
  if (!stage) {
    const governed = stages.filter(s => s.requires).map(s => s.name);
    return governed.length > 0
      ? `None: the release goes to the clusters below; to a cluster of ${governed
          .map(name => `stage ${name}`)
          .join(' or ')}, it is a release to that stage all the same`
      : 'None: the release goes to the clusters below, without a stage';
  }
  const clusters = stage.clusters.length
    ? stage.clusters.join(', ')
    : 'no cluster yet';
  if (stage.missing.length > 0) return `Not ready: ${stage.missing.join('; ')}`;
  if (stage.requires)
    return `Takes only a version ${stage.requires} verified. Clusters: ${clusters}`;
  return `Clusters: ${clusters}`;
}

/**
 * The application's stage to release to (none, or one of its stages in order), with what keeps
 * the stage from taking its required stage's version as helper text when it is not ready.
 */
export function StageField(props: {
  stages: StageStatus[];
  value: string;
  onChange: (stage: string) => void;
}) {
  const picked = props.stages.find(s => s.name === props.value);
  return (
    <TextField
      select
      fullWidth
      margin="normal"
      label="Stage"
      value={props.value}
      onChange={e => props.onChange(e.target.value)}
      SelectProps={{ native: true }}
      InputLabelProps={{ shrink: true }}
      error={!!picked && picked.missing.length > 0}
      helperText={stageHelper(props.stages, picked)}
      inputProps={{ 'aria-label': 'Stage' }}
    >
      <option value="">None</option>
      {props.stages.map(s => (
        <option key={s.name} value={s.name}>
          {s.name}
        </option>
      ))}
    </TextField>
  );
}

import type {
  CanaryClusterProgress,
  Release,
  ReleaseProgress,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import LinearProgress from '@material-ui/core/LinearProgress';
import Paper from '@material-ui/core/Paper';
import Typography from '@material-ui/core/Typography';
import { CodeWords } from '../StatusChip';
import {
  blockingText,
  latestMeasurements,
  measurementText,
  modeText,
  stepText,
  waitText,
  waveText,
} from './releaseText';

/** One cluster of a progressive release: state, step, weight, mode, pause and analysis. */
function ClusterCell(props: {
  cluster: string;
  progress?: CanaryClusterProgress;
  steps: number;
  release: ReleaseProgress;
  status: Release['status'];
}) {
  const { cluster, progress } = props;
  if (!progress) {
    return (
      <Paper
        variant="outlined"
        data-testid={`fleet-release-cluster-${cluster}`}
        style={{ padding: 8, minWidth: 200 }}
      >
        <Typography variant="subtitle2">{cluster}</Typography>
        <Typography variant="caption">not started</Typography>
      </Paper>
    );
  }
  const weight = Math.max(0, Math.min(100, progress.weight));
  const details = [
    stepText(progress, props.steps),
    modeText(progress.mode),
    waitText(progress, props.status),
  ].filter(Boolean);
  const blocking = blockingText(progress, {
    status: props.status,
    currentWave: props.release.currentWave,
  });
  const measurements = latestMeasurements(props.release.analysis, cluster);
  return (
    <Paper
      variant="outlined"
      data-testid={`fleet-release-cluster-${cluster}`}
      data-state={progress.state}
      role="group"
      aria-label={`Cluster ${cluster}`}
      style={{ padding: 8, minWidth: 200 }}
    >
      <Box display="flex" justifyContent="space-between" style={{ gap: 8 }}>
        <Typography variant="subtitle2">{cluster}</Typography>
        <Typography variant="caption" data-testid="state">
          <CodeWords code={progress.state} />
        </Typography>
      </Box>
      <Box display="flex" alignItems="center" style={{ gap: 8 }}>
        <Box flexGrow={1}>
          <LinearProgress
            variant="determinate"
            value={weight}
            aria-label={`Canary weight on ${cluster}`}
          />
        </Box>
        <Typography variant="body2" data-testid="weight">
          {weight}%
        </Typography>
      </Box>
      {details.length > 0 && (
        <Typography variant="caption" display="block">
          {details.join(' · ')}
        </Typography>
      )}
      {measurements.map(m => (
        <Typography
          key={m.template}
          variant="caption"
          display="block"
          color={m.phase === 'Successful' ? 'textPrimary' : 'error'}
          title={m.message ?? undefined}
        >
          {m.template}: <code>{measurementText(m)}</code> {m.phase}
          {m.message ? ` (${m.message})` : ''}
        </Typography>
      ))}
      {blocking && (
        <Typography
          variant="caption"
          display="block"
          color="textSecondary"
          data-testid="blocking"
        >
          {blocking}
        </Typography>
      )}
    </Paper>
  );
}

/**
 * Waves × clusters of a progressive release: a row per wave (done, running or waiting), a cell per
 * cluster.
 */
export function ReleaseGrid(props: {
  progress: ReleaseProgress;
  steps: number;
  /** The release's status: the one source of each wave's and pause's state. */
  status: Release['status'];
}) {
  const { progress } = props;
  const byCluster = new Map(progress.clusters.map(c => [c.cluster, c]));
  return (
    <Box display="flex" flexDirection="column" style={{ gap: 8 }}>
      {progress.waves.map((clusters, index) => (
        <Box
          key={index}
          role="group"
          aria-label={`Wave ${index + 1}`}
          data-wave={index + 1}
        >
          <Typography variant="overline">
            Wave {index + 1} (
            {waveText(index, progress.currentWave, props.status)})
          </Typography>
          <Box display="flex" flexWrap="wrap" style={{ gap: 8 }}>
            {clusters.map(cluster => (
              <ClusterCell
                key={cluster}
                cluster={cluster}
                progress={byCluster.get(cluster)}
                steps={props.steps}
                release={progress}
                status={props.status}
              />
            ))}
          </Box>
        </Box>
      ))}
    </Box>
  );
}

import type { StageStatus } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Paper from '@material-ui/core/Paper';
import Typography from '@material-ui/core/Typography';
import ArrowForwardIcon from '@material-ui/icons/ArrowForward';
import { RelativeTime } from '../RelativeTime';
import { formatExact, formatRelative } from '../RelativeTime/RelativeTime';
import { readinessText, runsText, shortVersion } from './stageText';

/** One stage: what it runs, what it verified (and the soak), whether it may take the next version. */
function StageBox(props: {
  stage: StageStatus;
  required?: StageStatus;
  deployedClusters: Set<string>;
}) {
  const { stage } = props;
  const { verified } = stage;
  const readiness = readinessText(stage, props.required);
  // The soak matters while it lasts: after it, the version is simply verified.
  const soaking =
    verified?.soakedUntil && Date.parse(verified.soakedUntil) > Date.now()
      ? verified.soakedUntil
      : undefined;
  return (
    <Paper
      variant="outlined"
      style={{ padding: 8, minWidth: 180 }}
      data-stage={stage.name}
    >
      <Typography variant="subtitle2" component="h3">
        {stage.name}
      </Typography>
      <Typography variant="caption" display="block" color="textSecondary">
        {stage.clusters.length > 0 ? stage.clusters.join(', ') : 'no clusters'}
      </Typography>
      <Typography variant="body2" data-testid="stage-runs">
        runs <code>{runsText(stage, props.deployedClusters)}</code>
      </Typography>
      <Typography variant="body2" data-testid="stage-verified">
        {verified ? (
          <>
            verified <code>{shortVersion(verified.version)}</code>{' '}
            <RelativeTime value={verified.since} />
            {soaking && (
              <span title={formatRelative(soaking)}>
                , soaked until {formatExact(soaking)}
              </span>
            )}
          </>
        ) : (
          'verified none yet'
        )}
      </Typography>
      {readiness && (
        <Typography
          variant="body2"
          data-testid="stage-readiness"
          color={stage.missing.length > 0 ? 'error' : 'textPrimary'}
        >
          {readiness}
        </Typography>
      )}
      {stage.missing.length > 0 && (
        <Box
          component="ul"
          aria-label={`What keeps ${stage.name} from taking ${stage.requires}'s version`}
          m={0}
          pl={2}
        >
          {stage.missing.map(reason => (
            <Typography component="li" variant="caption" key={reason}>
              {reason}
            </Typography>
          ))}
        </Box>
      )}
    </Paper>
  );
}

/**
 * The application's stages in order (staging → prod): per stage its clusters, the version they
 * run, the version it verified and, for a stage that requires another, whether it may take that
 * stage's verified version or what keeps it from it. Nothing when the application has no stages.
 */
export function StageStrip(props: {
  stages: StageStatus[];
  /** The clusters the component is deployed to, to tell "mixed" from "none". */
  deployedClusters: string[];
  /** Why the stages could not be read, if they could not. */
  error?: string;
}) {
  const byName = new Map(props.stages.map(s => [s.name, s]));
  const deployed = new Set(props.deployedClusters);
  if (props.stages.length === 0 && !props.error) return null;
  return (
    <Box
      component="section"
      mt={3}
      aria-label="Stages"
      data-testid="fleet-stages"
    >
      <Typography variant="h6" component="h2" gutterBottom>
        Stages
      </Typography>
      {props.error && (
        <Typography
          variant="caption"
          color="error"
          role="status"
          display="block"
        >
          Could not read the stages ({props.error}).
        </Typography>
      )}
      <Box
        component="ol"
        aria-label="Stages"
        display="flex"
        flexWrap="wrap"
        alignItems="center"
        m={0}
        p={0}
        style={{ listStyle: 'none', gap: 8 }}
      >
        {props.stages.map((stage, index) => (
          <Box
            component="li"
            key={stage.name}
            aria-label={`Stage ${stage.name}`}
            display="flex"
            alignItems="center"
            style={{ gap: 8 }}
          >
            {index > 0 && <ArrowForwardIcon aria-hidden color="action" />}
            <StageBox
              stage={stage}
              required={stage.requires ? byName.get(stage.requires) : undefined}
              deployedClusters={deployed}
            />
          </Box>
        ))}
      </Box>
    </Box>
  );
}

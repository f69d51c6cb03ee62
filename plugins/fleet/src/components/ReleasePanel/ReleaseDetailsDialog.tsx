import type { Release } from '@cnp/plugin-fleet-common';
import Button from '@material-ui/core/Button';
import Dialog from '@material-ui/core/Dialog';
import DialogActions from '@material-ui/core/DialogActions';
import DialogContent from '@material-ui/core/DialogContent';
import DialogTitle from '@material-ui/core/DialogTitle';
import Typography from '@material-ui/core/Typography';
import { ActorName } from '../EntityName';
import { RelativeTime } from '../RelativeTime';
import { CodeWords, ReasonText } from '../StatusChip';
import { ReleaseJudgments } from './JudgmentTable';
import { PlainTargets } from './PlainTargets';
import { ReleaseGrid } from './ReleaseGrid';
import { releasedText } from './releaseText';

/**
 * A finished release opened from the history: what it released, who started it and when, how it
 * ended and why, and where each cluster ended (waves × clusters for a progressive one, with its
 * judgments).
 */
export function ReleaseDetailsDialog(props: {
  release: Release;
  onClose: () => void;
}) {
  const { release } = props;
  const { progress } = release;
  return (
    <Dialog
      open
      onClose={props.onClose}
      maxWidth="md"
      fullWidth
      aria-labelledby="fleet-release-details-title"
    >
      <DialogTitle id="fleet-release-details-title">
        Release of {releasedText(release) ?? 'the current image'}
      </DialogTitle>
      <DialogContent>
        <Typography variant="body2" gutterBottom data-testid="release-summary">
          <strong>
            <CodeWords code={release.status} />
          </strong>
          {release.stage && ` — stage ${release.stage}`}; started{' '}
          <RelativeTime value={release.createdAt} /> by{' '}
          <ActorName actor={release.createdBy} />
        </Typography>
        {progress?.abort && (
          <Typography variant="body2" color="error" gutterBottom>
            <ReasonText
              reason={progress.abort.reason}
              variant="body2"
              display="inline"
            />
            : {progress.abort.message}
          </Typography>
        )}
        {release.skipped.map(s => (
          <Typography key={s.cluster} variant="caption" display="block">
            Skipped {s.cluster}: {s.reason}
          </Typography>
        ))}
        {progress ? (
          <>
            <ReleaseGrid
              progress={progress}
              steps={release.strategy?.canary?.steps?.length ?? 0}
              status={release.status}
            />
            <ReleaseJudgments progress={progress} />
          </>
        ) : (
          <PlainTargets release={release} />
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>Close</Button>
      </DialogActions>
    </Dialog>
  );
}

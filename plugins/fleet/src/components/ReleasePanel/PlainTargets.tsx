import type { Release } from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import Typography from '@material-ui/core/Typography';
import { CodeWords } from '../StatusChip';

/** A release without a strategy: its clusters and where each stands. */
export function PlainTargets(props: { release: Release }) {
  return (
    <Box
      component="ul"
      aria-label="Release targets"
      m={0}
      pl={2}
      data-testid="fleet-release-targets"
    >
      {props.release.targets.map(t => (
        <Typography
          component="li"
          variant="body2"
          key={t.cluster}
          data-testid={`fleet-release-cluster-${t.cluster}`}
        >
          {t.cluster}: revision {t.revision}, <CodeWords code={t.status} />
        </Typography>
      ))}
    </Box>
  );
}

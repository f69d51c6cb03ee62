import { Link } from '@backstage/core-components';
import type { ManifestSource } from '@cnp/plugin-fleet-common';
import Tooltip from '@material-ui/core/Tooltip';
import { useTableStyles } from '../tables';

/** A commit as people write it: its first seven characters. */
export function shortCommit(commit: string): string {
  return commit.slice(0, 7);
}

/**
 * Where a component's own manifests came from: the version asked for (or the source's own ref),
 * the commit it resolved to, linked to the URL read (the URL is the link's tooltip too).
 */
export function ManifestSourceText(props: { source: ManifestSource }) {
  const classes = useTableStyles();
  const { url, version, commit } = props.source;
  return (
    <Tooltip title={url}>
      <Link
        to={url}
        aria-label={`Source ${version ?? 'default ref'}${
          commit ? ` at ${shortCommit(commit)}` : ''
        }`}
      >
        <code className={classes.nowrap}>{version ?? 'default ref'}</code>
        {commit && (
          <>
            {' at '}
            <code className={classes.nowrap}>{shortCommit(commit)}</code>
          </>
        )}
      </Link>
    </Tooltip>
  );
}

import type { EnvValue, Revision } from '@cnp/plugin-fleet-common';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import { useTableStyles } from '../tables';

/** One field that differs between two revisions, as text. */
export interface RevisionDifference {
  field: string;
  from: string;
  to: string;
}

function envText(value: EnvValue | null | undefined): string {
  if (value === undefined) return '(not set)';
  // Values hidden from this caller: the variable is there, its value is not shown.
  if (value === null) return '(set, value hidden)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function sourceText(revision: Revision): string {
  const { source } = revision;
  if (!source) return '—';
  return `${source.version ?? 'default ref'}${
    source.commit ? ` at ${source.commit.slice(0, 7)}` : ''
  }`;
}

/**
 * What changed from revision `a` to revision `b`, field by field: image, source, replicas,
 * namespace, port, resources and each environment variable by key. Empty when nothing did.
 */
export function revisionDifferences(
  a: Revision,
  b: Revision,
): RevisionDifference[] {
  const fields: Array<[string, (r: Revision) => string]> = [
    ['Image', r => r.image || '—'],
    ['Source', sourceText],
    ['Replicas', r => (r.replicas === null ? 'default' : String(r.replicas))],
    ['Namespace', r => r.namespace ?? 'default'],
    ['Port', r => (r.port === null ? '—' : String(r.port))],
    ['Resources', r => (r.resources ? JSON.stringify(r.resources) : '—')],
  ];
  const differences = fields
    .map(([field, text]) => ({ field, from: text(a), to: text(b) }))
    .filter(d => d.from !== d.to);
  const keys = [
    ...new Set([...Object.keys(a.env ?? {}), ...Object.keys(b.env ?? {})]),
  ].sort();
  for (const key of keys) {
    const from = envText(a.env?.[key]);
    const to = envText(b.env?.[key]);
    if (from !== to) differences.push({ field: `env ${key}`, from, to });
  }
  return differences;
}

/** The differences between two revisions of a deployment, older first, as a table. */
export function RevisionDiff(props: { revisions: [Revision, Revision] }) {
  const classes = useTableStyles();
  const [a, b] = [...props.revisions].sort((x, y) => x.revision - y.revision);
  const differences = revisionDifferences(a, b);
  const title = `Revision ${a.revision} → revision ${b.revision}`;
  if (differences.length === 0)
    return (
      <Typography variant="body2">
        {title}: no difference in image, source, replicas, namespace, port,
        resources or environment.
      </Typography>
    );
  return (
    <Table size="small" aria-label={title} className={classes.table}>
      <TableHead>
        <TableRow>
          <TableCell>Field</TableCell>
          <TableCell>Revision {a.revision}</TableCell>
          <TableCell>Revision {b.revision}</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {differences.map(d => (
          <TableRow key={d.field}>
            <TableCell className={classes.nowrap}>{d.field}</TableCell>
            <TableCell>
              <code>{d.from}</code>
            </TableCell>
            <TableCell>
              <code>{d.to}</code>
            </TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

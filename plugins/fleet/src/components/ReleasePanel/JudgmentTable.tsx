import type {
  CanaryJudgment,
  CanaryMetricResult,
  ReleaseProgress,
} from '@cnp/plugin-fleet-common';
import Box from '@material-ui/core/Box';
import NativeSelect from '@material-ui/core/NativeSelect';
import Table from '@material-ui/core/Table';
import TableBody from '@material-ui/core/TableBody';
import TableCell from '@material-ui/core/TableCell';
import TableHead from '@material-ui/core/TableHead';
import TableRow from '@material-ui/core/TableRow';
import Typography from '@material-ui/core/Typography';
import ArrowDownwardIcon from '@material-ui/icons/ArrowDownward';
import ArrowUpwardIcon from '@material-ui/icons/ArrowUpward';
import CheckCircleIcon from '@material-ui/icons/CheckCircle';
import HelpIcon from '@material-ui/icons/Help';
import { useState, type ReactElement } from 'react';
import { formatRelative } from '../RelativeTime/RelativeTime';
import { ToneChip, type Tone } from '../StatusChip';
import { useTableStyles } from '../tables';
import {
  changeText,
  judgmentsByCluster,
  levelText,
  medianText,
  pText,
  verdictText,
  type JudgedMetric,
} from './judgmentText';
import { MedianMarks } from './MedianMarks';

const resultTone: Record<
  CanaryMetricResult,
  { tone: Tone; icon: ReactElement }
> = {
  Pass: { tone: 'ok', icon: <CheckCircleIcon /> },
  High: { tone: 'error', icon: <ArrowUpwardIcon /> },
  Low: { tone: 'error', icon: <ArrowDownwardIcon /> },
  NoData: { tone: 'neutral', icon: <HelpIcon /> },
};

const COLUMNS = [
  'Metric',
  'Result',
  'Canary median',
  'Baseline median',
  'Change',
  'p',
  'Samples',
  'Medians',
];

function MetricRow(props: { metric: JudgedMetric }) {
  const classes = useTableStyles();
  const { metric } = props;
  const { tone, icon } = resultTone[metric.result] ?? resultTone.NoData;
  return (
    <TableRow data-result={metric.result}>
      <TableCell
        component="th"
        scope="row"
        role="rowheader"
        className={classes.nowrap}
      >
        {metric.template}
        {metric.weight !== 1 && (
          <Typography variant="caption" color="textSecondary">
            {' '}
            (weight {metric.weight})
          </Typography>
        )}
      </TableCell>
      <TableCell>
        <ToneChip label={metric.result} tone={tone} icon={icon} what="Result" />
      </TableCell>
      <TableCell align="right">{medianText(metric.canaryMedian)}</TableCell>
      <TableCell align="right">{medianText(metric.baselineMedian)}</TableCell>
      <TableCell align="right" className={classes.nowrap}>
        {changeText(metric)}
      </TableCell>
      <TableCell
        align="right"
        className={classes.nowrap}
        title={levelText(metric)}
      >
        {pText(metric.p)}
      </TableCell>
      <TableCell
        align="right"
        className={classes.nowrap}
        title="canary / baseline"
      >
        {metric.canarySamples} / {metric.baselineSamples}
      </TableCell>
      <TableCell>
        <MedianMarks metric={metric} />
      </TableCell>
    </TableRow>
  );
}

/** "Step 2, 3 min ago (newest)": which judgment an option of the choice shows. */
function optionText(judgment: CanaryJudgment, newest: boolean): string {
  return `Step ${judgment.stepIndex + 1}, ${formatRelative(judgment.at)}${
    newest ? ' (newest)' : ''
  }`;
}

/**
 * The judgments of the canary against its baseline on one cluster: the newest, unless an
 * earlier one is chosen, as its score and verdict over a row per metric.
 */
export function JudgmentTable(props: {
  cluster: string;
  /** Newest first; at least one. */
  judgments: CanaryJudgment[];
}) {
  const classes = useTableStyles();
  const { cluster, judgments } = props;
  const [chosen, setChosen] = useState(0);
  const judgment = judgments[Math.min(chosen, judgments.length - 1)];
  return (
    <Box data-testid={`fleet-judgment-${cluster}`} mb={1}>
      <Box display="flex" alignItems="baseline" style={{ gap: 8 }}>
        <Typography variant="subtitle2">{cluster}</Typography>
        <Typography
          variant="body2"
          color={judgment.verdict === 'Fail' ? 'error' : 'textPrimary'}
          data-testid="verdict"
          data-verdict={judgment.verdict}
        >
          {verdictText(judgment)}
        </Typography>
        {judgments.length > 1 && (
          <NativeSelect
            value={chosen}
            onChange={e => setChosen(Number(e.target.value))}
            inputProps={{ 'aria-label': `Judgment shown on ${cluster}` }}
          >
            {judgments.map((j, i) => (
              <option key={`${j.at}-${j.stepIndex}`} value={i}>
                {optionText(j, i === 0)}
              </option>
            ))}
          </NativeSelect>
        )}
      </Box>
      <Box className={classes.scroll}>
        <Table
          size="small"
          aria-label={`Judgment on ${cluster}`}
          className={classes.table}
        >
          <TableHead>
            <TableRow>
              {COLUMNS.map(c => (
                <TableCell
                  key={c}
                  align={
                    c === 'Metric' || c === 'Result' || c === 'Medians'
                      ? 'left'
                      : 'right'
                  }
                  title={c === 'Samples' ? 'canary / baseline' : undefined}
                >
                  {c}
                </TableCell>
              ))}
            </TableRow>
          </TableHead>
          <TableBody>
            {judgment.metrics.map(m => (
              <MetricRow key={m.template} metric={m} />
            ))}
          </TableBody>
        </Table>
      </Box>
    </Box>
  );
}

/**
 * The canary judged against its baseline, a table per judged cluster in the waves' order;
 * nothing when no step was judged (no analysis template compares with a baseline).
 */
export function ReleaseJudgments(props: { progress: ReleaseProgress }) {
  const { progress } = props;
  const clusters = judgmentsByCluster(
    progress.judgments ?? [],
    progress.waves.flat(),
  );
  if (clusters.length === 0) return null;
  return (
    <Box
      mt={2}
      role="region"
      aria-label="Canary judgments"
      data-testid="fleet-release-judgments"
    >
      <Typography variant="overline">Canary against baseline</Typography>
      {clusters.map(([cluster, judgments]) => (
        <JudgmentTable key={cluster} cluster={cluster} judgments={judgments} />
      ))}
    </Box>
  );
}

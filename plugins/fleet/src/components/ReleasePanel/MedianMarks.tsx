import { useTheme } from '@material-ui/core/styles';
import type { JudgedMetric } from './judgmentText';
import { valueText } from './releaseText';

const WIDTH = 96;
const HEIGHT = 16;
const PAD = 5;

/**
 * The baseline's and the canary's medians as two marks on one scale, from 0 (or the lower
 * median, when below 0) to the higher one: a grey bar for the baseline, a dot for the canary in
 * the result's colour, and a line between them, so the size and the direction of the shift show
 * at a glance. The scale is the row's own, since each metric has its own unit. Nothing without
 * both medians.
 */
export function MedianMarks(props: { metric: JudgedMetric }) {
  const theme = useTheme();
  const { canaryMedian: canary, baselineMedian: baseline } = props.metric;
  if (canary === null || baseline === null) return null;
  const low = Math.min(0, canary, baseline);
  const high = Math.max(0, canary, baseline);
  const span = high - low || 1;
  const x = (v: number) => PAD + ((v - low) / span) * (WIDTH - 2 * PAD);
  const passed = props.metric.result === 'Pass';
  const colour = passed ? theme.palette.status.ok : theme.palette.status.error;
  const middle = HEIGHT / 2;
  return (
    <svg
      width={WIDTH}
      height={HEIGHT}
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="img"
      aria-label={`Canary median ${valueText(
        canary,
      )} against baseline median ${valueText(baseline)}`}
      data-testid="median-marks"
    >
      <line
        x1={PAD}
        x2={WIDTH - PAD}
        y1={middle}
        y2={middle}
        stroke={theme.palette.divider}
      />
      <line
        x1={x(baseline)}
        x2={x(canary)}
        y1={middle}
        y2={middle}
        stroke={colour}
        strokeWidth={2}
      />
      <rect
        x={x(baseline) - 1.5}
        y={2}
        width={3}
        height={HEIGHT - 4}
        fill={theme.palette.text.secondary}
        data-mark="baseline"
      />
      <circle
        cx={x(canary)}
        cy={middle}
        r={4}
        fill={colour}
        data-mark="canary"
      />
    </svg>
  );
}

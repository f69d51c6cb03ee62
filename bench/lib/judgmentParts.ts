/*
 * The parts of the backend plugin that judge a canary against its baseline, for
 * bench/judgment.ts: the range read of one side (`queryRange`), the step's window
 * (`rangeWindow`), the Mann-Whitney judgment of a metric (`judgeMetric`) and the score
 * (`scoreJudgment`), as `orchestrator/judging.ts` uses them. They are not on the plugin's public
 * entry points, so they are taken from its source; nothing here changes them.
 */
export {
  queryRange,
  rangeWindow,
} from '../../plugins/fleet-backend/src/progressive/judge/rangeQuery';
export {
  judgeMetric,
  scoreJudgment,
} from '../../plugins/fleet-backend/src/progressive/judge/judgment';
export { mannWhitneyU } from '../../plugins/fleet-backend/src/progressive/judge/mannWhitney';
export { autoregressiveSeries } from '../../plugins/fleet-backend/src/testing/autoregressive';

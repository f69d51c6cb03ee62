export { StageStrip } from './StageStrip';

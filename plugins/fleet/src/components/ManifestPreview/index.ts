export {
  hasPreviewedCluster,
  PreviewButton,
  PreviewPanel,
} from './ManifestPreview';
export { ManifestSourceText } from './ManifestSourceText';
export { usePreview } from './usePreview';
export type { PreviewState } from './usePreview';

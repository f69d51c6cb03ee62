export { ReleaseDialog } from './ReleaseDialog';
export type { ReleaseDialogProps } from './ReleaseDialog';

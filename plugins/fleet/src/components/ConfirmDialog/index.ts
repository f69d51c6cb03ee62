export { ConfirmDialog, DialogButtons } from './ConfirmDialog';

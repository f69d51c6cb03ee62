export { useTableStyles } from './useTableStyles';

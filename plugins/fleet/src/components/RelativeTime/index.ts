export { RelativeTime, formatRelative } from './RelativeTime';

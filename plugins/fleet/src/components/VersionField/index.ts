export { VersionField, isVersionInvalid } from './VersionField';

import TextField from '@material-ui/core/TextField';

/** What the API takes as a version: a branch, a tag or a commit, at most 200 characters. */
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

/** Whether `version` is no branch, tag or commit name; empty is valid (the source's own ref). */
export function isVersionInvalid(version: string): boolean {
  const trimmed = version.trim();
  return trimmed !== '' && (trimmed.length > 200 || !VERSION.test(trimmed));
}

/**
 * The version text field of the Deploy and Release dialogs, for a component that brings its own
 * manifests: the branch, tag or commit of its repository to apply; empty, the ref its source
 * location names (`manifestsRef` says where in the repository the manifests are).
 */
export function VersionField(props: {
  value: string;
  onChange: (value: string) => void;
  manifestsRef: string;
}) {
  const { value, onChange } = props;
  const invalid = isVersionInvalid(value);
  return (
    <TextField
      fullWidth
      margin="normal"
      label="Version"
      placeholder="main, v2.1.0 or a commit"
      value={value}
      onChange={e => onChange(e.target.value)}
      error={invalid}
      helperText={
        invalid
          ? "A branch, a tag or a commit: letters, digits, '.', '_', '/' and '-'"
          : `A branch, a tag or a commit of the manifests in ${props.manifestsRef}; empty: the ref the component's source location names`
      }
      inputProps={{ 'aria-label': 'Version', spellCheck: false }}
    />
  );
}

import TextField from '@material-ui/core/TextField';
import type { ReactNode } from 'react';

/** Whether `image` is no image reference: empty, or with white space in it. */
export function isImageInvalid(image: string): boolean {
  return image.trim() === '' || /\s/.test(image.trim());
}

/**
 * The image text field of the Deploy and Release dialogs: marked in error once something
 * invalid is typed (not while empty), with the dialog's own help text.
 */
export function ImageField(props: {
  value: string;
  onChange: (value: string) => void;
  helperText: ReactNode;
}) {
  const { value, onChange } = props;
  return (
    <TextField
      fullWidth
      margin="normal"
      label="Image"
      value={value}
      onChange={e => onChange(e.target.value)}
      error={isImageInvalid(value) && value !== ''}
      helperText={props.helperText}
      inputProps={{ 'aria-label': 'Image' }}
    />
  );
}

/** What Fleet accepts as a container image, from a request or from the `cnp.io/image` annotation. */
export const IMAGE_REFERENCE = {
  maxLength: 512,
  // No spaces and no control characters (a NUL cannot even be stored in PostgreSQL text).
  // eslint-disable-next-line no-control-regex
  pattern: /^[^\s\u0000-\u001f\u007f]+$/,
  hint: 'an image reference has no spaces, e.g. ghcr.io/acme/payments:1.4.2',
};

/** Why `image` is not a usable image reference, or undefined when it is. */
export function imageReferenceProblem(image: string): string | undefined {
  if (image.length === 0) return 'must not be empty';
  if (image.length > IMAGE_REFERENCE.maxLength)
    return `must be at most ${IMAGE_REFERENCE.maxLength} characters`;
  if (!IMAGE_REFERENCE.pattern.test(image)) return IMAGE_REFERENCE.hint;
  return undefined;
}

/**
 * What a release puts out, in words: the version of the component's own manifests (with the image
 * it sets in them, if any), else its image, else the current image.
 */
export function releasedWhat(request: {
  image?: string;
  version?: string;
}): string {
  if (request.version === undefined)
    return request.image ?? 'the current image';
  const image =
    request.image === undefined ? '' : ` with image ${request.image}`;
  return `version ${request.version}${image}`;
}

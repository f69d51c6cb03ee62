/**
 * What was thrown, as an `Error` a logger can take as is (with its name, message and stack):
 * JavaScript lets code throw anything.
 */
export function asError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (
    typeof thrown === 'object' &&
    thrown !== null &&
    typeof (thrown as { message?: unknown }).message === 'string'
  ) {
    const error = new Error((thrown as { message: string }).message);
    const name = (thrown as { name?: unknown }).name;
    if (typeof name === 'string') error.name = name;
    return error;
  }
  return new Error(String(thrown));
}

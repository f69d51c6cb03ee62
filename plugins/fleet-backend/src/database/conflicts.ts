/*
 * The errors of conditional writes: what a store refuses because the row is no longer as the
 * writer read it, or the lease that fences the write is no longer the writer's.
 */

/**
 * A conditional write whose condition no longer holds: the resource changed since the caller read
 * it (an `If-Match` naming an old ETag). The error handler answers it with its `statusCode`, 412.
 */
export class PreconditionFailedError extends Error {
  readonly name = 'PreconditionFailedError';
  readonly statusCode = 412;
}

/**
 * A write fenced by a lease whose holder no longer holds it (it expired, or another holder took
 * it and its token moved on): refused, so a cycle that lost its lease cannot write over the work
 * of the one that took it over.
 */
export class LeaseLostError extends Error {
  readonly name = 'LeaseLostError';
}

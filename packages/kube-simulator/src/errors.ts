/**
 * Kubernetes `Status` objects and the error type the store and router throw.
 * Messages follow the wording of the real API server so that code matching on
 * them (or showing them to users) behaves as it would against a real cluster.
 */

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): KubeStatus {
    return failureStatus(this.code, this.reason, this.message, this.details);
  }
}

export function failureStatus(
  code: number,
  reason: string,
  message: string,
  details?: StatusDetails,
): KubeStatus {
  const status: KubeStatus = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  };
  if (details) status.details = details;
  return status;
}

/** `deployments.apps`, `services` — how the API server names a group resource. */
export function qualifiedResource(plural: string, group: string): string {
  return group ? `${plural}.${group}` : plural;
}

/** `Deployment.apps`, `Service` — how validation errors name a kind. */
export function qualifiedKind(kind: string, group: string): string {
  return group ? `${kind}.${group}` : kind;
}

export const errors = {
  notFound(plural: string, group: string, name: string): ApiError {
    return new ApiError(
      404,
      'NotFound',
      `${qualifiedResource(plural, group)} "${name}" not found`,
      { name, group: group || undefined, kind: plural },
    );
  },
  alreadyExists(plural: string, group: string, name: string): ApiError {
    return new ApiError(
      409,
      'AlreadyExists',
      `${qualifiedResource(plural, group)} "${name}" already exists`,
      { name, group: group || undefined, kind: plural },
    );
  },
  conflict(plural: string, group: string, name: string, why: string): ApiError {
    return new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(
        plural,
        group,
      )} "${name}": ${why}`,
      { name, group: group || undefined, kind: plural },
    );
  },
  invalid(
    kind: string,
    group: string,
    name: string,
    causes: StatusCause[],
  ): ApiError {
    const parts = causes.map(c =>
      c.field ? `${c.field}: ${c.message}` : c.message,
    );
    const joined = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
    return new ApiError(
      422,
      'Invalid',
      `${qualifiedKind(kind, group)} "${name}" is invalid: ${joined}`,
      { name, group: group || undefined, kind, causes },
    );
  },
  badRequest(message: string): ApiError {
    return new ApiError(400, 'BadRequest', message);
  },
  methodNotAllowed(): ApiError {
    return new ApiError(
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
  },
  notFoundPath(): ApiError {
    return new ApiError(
      404,
      'NotFound',
      'the server could not find the requested resource',
    );
  },
  unsupportedMediaType(accepted: string[]): ApiError {
    return new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(
        ', ',
      )}`,
    );
  },
  unauthorized(): ApiError {
    return new ApiError(401, 'Unauthorized', 'Unauthorized');
  },
  internal(message: string): ApiError {
    return new ApiError(500, 'InternalError', message);
  },
};

/** A cause in the wording of field.ErrorList ("Invalid value: ..."). */
export const cause = {
  invalid(field: string, value: unknown, detail: string): StatusCause {
    return {
      reason: 'FieldValueInvalid',
      field,
      message: `Invalid value: ${formatValue(value)}: ${detail}`,
    };
  },
  required(field: string, detail = ''): StatusCause {
    return {
      reason: 'FieldValueRequired',
      field,
      message: detail ? `Required value: ${detail}` : 'Required value',
    };
  },
  duplicate(field: string, value: unknown): StatusCause {
    return {
      reason: 'FieldValueDuplicate',
      field,
      message: `Duplicate value: ${formatValue(value)}`,
    };
  },
  forbidden(field: string, detail: string): StatusCause {
    return {
      reason: 'FieldValueForbidden',
      field,
      message: `Forbidden: ${detail}`,
    };
  },
  notSupported(field: string, value: unknown, allowed: string[]): StatusCause {
    return {
      reason: 'FieldValueNotSupported',
      field,
      message: `Unsupported value: ${formatValue(
        value,
      )}: supported values: ${allowed.map(a => `"${a}"`).join(', ')}`,
    };
  },
};

function formatValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined) return 'null';
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** Argo CD's health statuses. Its `Unknown` is not one: Fleet reads it as Progressing. */
export type ObjectHealthStatus =
  | 'Healthy'
  | 'Progressing'
  | 'Degraded'
  | 'Suspended'
  | 'Missing';

/** The health of one object, or of a set of them. */
export interface ObjectHealth {
  status: ObjectHealthStatus;
  /** Argo CD's explanation; left out where Argo CD gives none. */
  message?: string;
}

/** An object of a set, by its kind, name and namespace. */
export interface ObjectRef {
  kind: string;
  name: string;
  namespace?: string;
}

/** A live object as parsed JSON. */
export type Json = Record<string, unknown>;

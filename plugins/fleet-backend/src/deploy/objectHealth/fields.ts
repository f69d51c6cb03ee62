import type { Json, ObjectHealth, ObjectHealthStatus } from './types';

/* Reading a live object's fields as Argo CD's Go and Lua checks read them. */

/** Lua's and Go's nil: a field that is absent or JSON null. */
export function isNil(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

export function record(value: unknown): Json {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Json)
    : {};
}

export function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.map(record) : [];
}

/** A number as Go reads an absent integer field: zero. */
export function int(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** A number as Go reads an absent pointer field: undefined. */
export function optionalInt(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Lua's `tonumber`: a number, or a string that spells one. */
export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isNaN(n) ? undefined : n;
  }
  return undefined;
}

/** Go's `%q` for a Kubernetes name. */
export function quote(name: string): string {
  return JSON.stringify(name);
}

export function health(
  status: ObjectHealthStatus,
  message?: string,
): ObjectHealth {
  return message ? { status, message } : { status };
}

/**
 * Argo CD's `Unknown`: the check could not tell (a Pod or claim in no known phase, an
 * inconclusive analysis, conditions that do not parse). Fleet waits on it as on an object still
 * progressing, so that a deployment neither passes nor fails on a guess.
 */
export function unknown(message?: string): ObjectHealth {
  return health('Progressing', message);
}

export function conditionOf(status: Json, type: string): Json | undefined {
  return list(status.conditions).find(c => c.type === type);
}

/** Whether a Service or Ingress has been given a load balancer address. */
export function hasLoadBalancerIngress(obj: Json): boolean {
  return list(record(record(obj.status).loadBalancer).ingress).length > 0;
}

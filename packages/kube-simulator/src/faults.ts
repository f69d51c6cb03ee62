/**
 * Fault injection per cluster. A fault applies to the Kubernetes API of one
 * simulated cluster (never to the /_sim control API):
 * - `ok`: normal answers, after `latencyMs` if set;
 * - `down`: the connection is destroyed without an answer (ECONNRESET);
 * - `timeout`: the request is accepted and never answered;
 * - `error`: every request gets a 500 InternalError Status, after `latencyMs`.
 */

export type FaultMode = 'ok' | 'down' | 'timeout' | 'error';

export interface Fault {
  mode: FaultMode;
  latencyMs?: number;
}

export const FAULT_MODES: readonly FaultMode[] = [
  'ok',
  'down',
  'timeout',
  'error',
];

export const NO_FAULT: Fault = { mode: 'ok' };

/** The largest latency accepted (10 minutes): larger is surely a mistake. */
export const MAX_LATENCY_MS = 600_000;

/** Validates untrusted input (a control API body or a library call). */
export function parseFault(input: unknown): { fault?: Fault; error?: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { error: 'fault must be a JSON object like {"mode":"ok"}' };
  }
  const record = input as Record<string, unknown>;
  const unknownKeys = Object.keys(record).filter(
    k => k !== 'mode' && k !== 'latencyMs',
  );
  if (unknownKeys.length)
    return { error: `unknown field(s): ${unknownKeys.join(', ')}` };
  const mode = record.mode;
  if (typeof mode !== 'string' || !FAULT_MODES.includes(mode as FaultMode)) {
    return { error: `mode must be one of ${FAULT_MODES.join(', ')}` };
  }
  const fault: Fault = { mode: mode as FaultMode };
  if (record.latencyMs !== undefined) {
    const latency = record.latencyMs;
    if (
      typeof latency !== 'number' ||
      !Number.isInteger(latency) ||
      latency < 0 ||
      latency > MAX_LATENCY_MS
    ) {
      return {
        error: `latencyMs must be an integer between 0 and ${MAX_LATENCY_MS}`,
      };
    }
    if (latency > 0) fault.latencyMs = latency;
  }
  return { fault };
}

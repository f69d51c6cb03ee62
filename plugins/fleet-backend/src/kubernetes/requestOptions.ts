import {
  Observable,
  type ConfigurationOptions,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import type { Agent } from 'node:https';

/**
 * Per-call options that really abort a Kubernetes API request after `timeoutMs` (the server
 * sees the connection close), instead of waiting on a dead cluster for the OS TCP timeout.
 * The object-style API of client-node 1.x hands them to its observable API, so the middleware
 * returns client-node's own Observable. With `agent`, the request goes through that agent.
 */
export function withTimeout(
  timeoutMs: number,
  agent?: Agent,
): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context: RequestContext) => {
          context.setSignal(AbortSignal.timeout(timeoutMs));
          // Runs after client-node's authentication set its own one-off agent: the cluster's
          // pooled agent replaces it (same TLS options, see ClusterClients).
          if (agent) context.setAgent(agent);
          return new Observable(Promise.resolve(context));
        },
        post: (response: ResponseContext) =>
          new Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  } as unknown as ConfigurationOptions;
}

/** A short, secret-free description of why a Kubernetes API call failed. */
export function describeKubeError(error: unknown, timeoutMs?: number): string {
  const e = error as {
    name?: string;
    code?: number | string;
    message?: string;
    body?: unknown;
    cause?: { code?: string; message?: string };
  };
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') {
    return timeoutMs ? `timed out after ${timeoutMs} ms` : 'request timed out';
  }
  if (typeof e?.code === 'number') {
    let detail = '';
    const body = typeof e.body === 'string' ? safeJson(e.body) : e.body;
    if (body && typeof body === 'object' && 'message' in body) {
      detail = String((body as { message: unknown }).message);
    }
    return `HTTP ${e.code}${detail ? `: ${detail}` : ''}`.slice(0, 500);
  }
  const cause = e?.cause?.code ?? e?.cause?.message;
  const message = e?.message ?? String(error);
  return (
    cause && !message.includes(cause) ? `${message} (${cause})` : message
  ).slice(0, 500);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether a Kubernetes API call failed with this HTTP status (client-node puts it in `code`). */
export function isKubeStatus(error: unknown, code: number): boolean {
  return (error as { code?: unknown } | undefined)?.code === code;
}

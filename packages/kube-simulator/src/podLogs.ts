/**
 * `GET /api/v1/namespaces/<ns>/pods/<name>/log`: what the kubelet would stream for a container of
 * a simulated pod, as plain text. There is no process to read from, so the log is what such a
 * container writes, derived from the pod: a start line, the port it listens on, and one access
 * line per readiness probe (every 10 s, `GET /health 200`, or 503 while not ready) since it
 * started; a crash-looping container's runs end with the error it exits on. The parameters are
 * the API server's: `container` (required when the pod has several), `previous`, `timestamps`,
 * `tailLines`, `limitBytes`, `sinceSeconds`, `sinceTime`, with its errors (400) for bad values, an
 * unknown container, or a previous run that does not exist.
 */
import { errors } from './errors';
import type { SimObject } from './store';
import { asArray, asObject, JsonObject } from './util';

const PROBE_PERIOD_MS = 10_000;
/** The most lines a log keeps (a kubelet rotates container logs too). */
export const MAX_LOG_LINES = 5000;

interface Line {
  at: number;
  text: string;
}

/** Go's query-string boolean: absent is false; `0`, `f`, `false`, `n`, `no` are false; anything else (even empty) true. */
function queryBool(query: URLSearchParams, key: string): boolean {
  const values = query.getAll(key);
  if (values.length === 0) return false;
  return !['0', 'f', 'false', 'n', 'no'].includes(values[0].toLowerCase());
}

function queryInt(
  query: URLSearchParams,
  key: string,
  min: number,
): number | undefined {
  const raw = query.get(key);
  if (raw === null) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(value)) {
    throw errors.badRequest(
      `${key}: Invalid value: "${raw}": must be an integer`,
    );
  }
  if (value < min) {
    throw errors.badRequest(
      `${key}: Invalid value: ${value}: must be greater than ${
        min === 0 ? 'or equal to 0' : min - 1
      }`,
    );
  }
  return value;
}

/** RFC 3339 with nanoseconds, as the kubelet's `timestamps=true` prefixes lines. */
function rfc3339Nano(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-12-01T05:00:00.123Z
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000000Z`;
}

function runLines(options: {
  pod: SimObject;
  container: JsonObject;
  startedAt: number;
  endedAt: number;
  ready: boolean;
  crashed: boolean;
}): Line[] {
  const { pod, container, startedAt, endedAt, ready, crashed } = options;
  const name = String(container.name ?? '');
  const image = String(container.image ?? '');
  const port = asObject(asArray(container.ports)[0])?.containerPort ?? 8000;
  const lines: Line[] = [
    {
      at: startedAt,
      text: `Starting ${image} as container ${name} of pod ${pod.metadata.namespace}/${pod.metadata.name}`,
    },
  ];
  if (crashed) {
    lines.push(
      {
        at: startedAt + 500,
        text: 'Error: cannot reach a required dependency: connection refused',
      },
      { at: startedAt + 600, text: 'exiting with status 1' },
    );
    return lines;
  }
  lines.push({ at: startedAt + 200, text: `Listening on 0.0.0.0:${port}` });
  const probeFrom = String(pod.status?.hostIP ?? '172.18.0.2');
  const first = Math.max(
    startedAt + PROBE_PERIOD_MS,
    endedAt - MAX_LOG_LINES * PROBE_PERIOD_MS,
  );
  for (
    let at =
      startedAt +
      PROBE_PERIOD_MS * Math.ceil((first - startedAt) / PROBE_PERIOD_MS);
    at <= endedAt;
    at += PROBE_PERIOD_MS
  ) {
    lines.push({
      at,
      text: `${probeFrom} - "GET /health HTTP/1.1" ${
        ready ? 200 : 503
      } - "kube-probe/1.30"`,
    });
  }
  return lines;
}

/** The log text of one container of `pod` at `now`, or an ApiError (400) as the API server answers. */
export function podLog(
  pod: SimObject,
  query: URLSearchParams,
  now: number,
): string {
  const containers = asArray(pod.spec?.containers).map(c => asObject(c) ?? {});
  const containerName = selectedContainer(pod, containers, query);
  const container = containers.find(
    c => String(c.name ?? '') === containerName,
  )!;
  const previous = queryBool(query, 'previous');
  const timestamps = queryBool(query, 'timestamps');
  const tailLines = queryInt(query, 'tailLines', 0);
  const limitBytes = queryInt(query, 'limitBytes', 1);
  const since = sinceOf(query, now);
  let lines = containerLines(pod, container, containerName, previous, now);
  if (since !== undefined) lines = lines.filter(l => l.at >= since!);
  if (tailLines !== undefined)
    lines = tailLines === 0 ? [] : lines.slice(-tailLines);
  let text = lines
    .map(l => `${timestamps ? `${rfc3339Nano(l.at)} ` : ''}${l.text}\n`)
    .join('');
  if (limitBytes !== undefined) {
    text = Buffer.from(text, 'utf8').subarray(0, limitBytes).toString('utf8');
  }
  return text;
}

/** The container the query names (`container`), or the pod's only one. */
function selectedContainer(
  pod: SimObject,
  containers: JsonObject[],
  query: URLSearchParams,
): string {
  const name = pod.metadata.name;
  const names = containers.map(c => String(c.name ?? ''));
  let containerName = query.get('container') ?? '';
  if (!containerName) {
    if (names.length !== 1) {
      throw errors.badRequest(
        `a container name must be specified for pod ${name}, choose one of: [${names.join(
          ' ',
        )}]`,
      );
    }
    containerName = names[0];
  }
  const index = names.indexOf(containerName);
  if (index < 0) {
    throw errors.badRequest(
      `container ${containerName} is not valid for pod ${name}`,
    );
  }
  return containerName;
}

/** The time from which lines are wanted (`sinceSeconds` or `sinceTime`), if any. */
function sinceOf(query: URLSearchParams, now: number): number | undefined {
  const sinceSeconds = queryInt(query, 'sinceSeconds', 1);
  const sinceTimeRaw = query.get('sinceTime');
  if (sinceSeconds !== undefined && sinceTimeRaw !== null) {
    throw errors.badRequest(
      'sinceTime: Invalid value: "": at most one of `sinceTime` or `sinceSeconds` may be specified',
    );
  }
  let since: number | undefined;
  if (sinceSeconds !== undefined) since = now - sinceSeconds * 1000;
  if (sinceTimeRaw !== null) {
    since = Date.parse(sinceTimeRaw);
    if (!Number.isFinite(since)) {
      throw errors.badRequest(
        `sinceTime: Invalid value: "${sinceTimeRaw}": must be an RFC 3339 time`,
      );
    }
  }
  return since;
}

/** The lines of the container's current run, or of its last one (`previous`, or in back-off). */
function containerLines(
  pod: SimObject,
  container: JsonObject,
  containerName: string,
  previous: boolean,
  now: number,
): Line[] {
  const name = pod.metadata.name;
  const status = asArray(pod.status?.containerStatuses)
    .map(c => asObject(c) ?? {})
    .find(c => c.name === containerName);
  if (!status) {
    throw errors.badRequest(
      `container "${containerName}" in pod "${name}" is waiting to start: ContainerCreating`,
    );
  }
  const restarts =
    typeof status.restartCount === 'number' ? status.restartCount : 0;
  const state = asObject(status.state) ?? {};
  const crashLooping = asObject(state.waiting) !== undefined;
  const running = asObject(state.running);
  const lastTerminated = asObject(asObject(status.lastState)?.terminated);
  let lines: Line[];
  if (previous) {
    if (restarts === 0 || !lastTerminated) {
      throw errors.badRequest(
        `previous terminated container "${containerName}" in pod "${name}" not found`,
      );
    }
    const startedAt = Date.parse(String(lastTerminated.startedAt));
    lines = runLines({
      pod,
      container: container,
      startedAt,
      endedAt: Date.parse(String(lastTerminated.finishedAt)),
      ready: false,
      crashed: true,
    });
  } else if (crashLooping && lastTerminated) {
    // A container in back-off has no current run: the kubelet serves the last one.
    lines = runLines({
      pod,
      container: container,
      startedAt: Date.parse(String(lastTerminated.startedAt)),
      endedAt: Date.parse(String(lastTerminated.finishedAt)),
      ready: false,
      crashed: true,
    });
  } else {
    const startedAt = Date.parse(
      String(
        running?.startedAt ??
          pod.status?.startTime ??
          pod.metadata.creationTimestamp,
      ),
    );
    lines = runLines({
      pod,
      container: container,
      startedAt,
      endedAt: now,
      ready: status.ready === true,
      crashed: false,
    });
  }
  return lines;
}

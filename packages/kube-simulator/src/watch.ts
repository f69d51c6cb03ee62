/**
 * Watch, with the API server's semantics (its watch cache): `GET <collection>?watch=true`
 * answers 200 with a chunked `application/json` stream of one
 * `{"type":"ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR","object":{...}}` per line.
 *
 * - `resourceVersion` unset or `"0"`: synthetic ADDED events for the objects that exist now,
 *   then every later change. `resourceVersion=N`: every change after N, in order, then live
 *   changes; N older than the kept history gets an ERROR event carrying a 410 `Expired` Status
 *   and the stream ends; N newer than the cluster gets, after 3 s, a 504 `Timeout` ERROR
 *   ("Too large resource version").
 * - `labelSelector` / `fieldSelector` filter; an object that stops matching is seen as DELETED
 *   (its previous state at the new resourceVersion), one that starts matching as ADDED.
 * - `allowWatchBookmarks=true`: BOOKMARK events whose object carries only kind, apiVersion and
 *   `metadata.resourceVersion`, every `bookmarkIntervalMs` and 2 s before the server's timeout.
 * - `timeoutSeconds`: the server ends the stream after it; without it (or 0) after the server's
 *   default, `minTimeoutMs` × [1, 2) (kube-apiserver: `--min-request-timeout` 1800 s, jittered).
 * - `sendInitialEvents=true` (with `resourceVersionMatch=NotOlderThan` and
 *   `allowWatchBookmarks=true`, as the API server requires): the current state as ADDED events,
 *   then a BOOKMARK annotated `k8s.io/initial-events-end: "true"`.
 */
import type { ServerResponse } from 'node:http';
import { ChangeEvent, selectionOf, Selection } from './changeLog';
import { connectionOf, resetResponse } from './connections';
import { cause, errors, failureStatus, KubeStatus } from './errors';
import { KIND_FIELD_SELECTORS } from './podResources';
import { apiVersionOf, ResourceDef } from './resourceDef';
import {
  FieldRequirement,
  matches,
  parseFieldSelector,
  parseLabelSelector,
  Requirement,
} from './selectors';
import type { ClusterStore } from './store';
import { JsonObject } from './util';

export interface WatchSettings {
  /** How often a watch that allows bookmarks gets one (kube-apiserver: 1 minute). */
  bookmarkIntervalMs: number;
  /**
   * Without `timeoutSeconds`, the server ends a watch after a random time in
   * [minTimeoutMs, 2 × minTimeoutMs) (kube-apiserver: 30 to 60 minutes).
   */
  minTimeoutMs: number;
  /**
   * While a cluster has open watches, how often its controllers run (status of Deployments,
   * Rollouts, HPAs, PDBs, ReplicaSets and Pods is otherwise computed when read).
   */
  controllerTickMs: number;
  /** How long a watch from a resourceVersion newer than the cluster waits before its 504. */
  tooLargeWaitMs: number;
}

export const DEFAULT_WATCH_SETTINGS: WatchSettings = {
  bookmarkIntervalMs: 60_000,
  minTimeoutMs: 1_800_000,
  controllerTickMs: 1000,
  tooLargeWaitMs: 3_000,
};

export interface WatchRequest {
  /** The resource as requested (its version is what the events show). */
  def: ResourceDef;
  /** The version the objects are stored under (differs for multi-version CRDs). */
  stored: ResourceDef;
  namespace?: string;
  labels: Requirement[];
  fields: FieldRequirement[];
  /** undefined: unset or "0". */
  resourceVersion?: number;
  allowBookmarks: boolean;
  /** undefined: the server's default timeout. */
  timeoutMs?: number;
  sendInitialEvents?: boolean;
}

const TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** Go's strconv.ParseBool, as the API server decodes boolean query parameters. */
export function parseBool(
  name: string,
  value: string | null,
): boolean | undefined {
  if (value === null) return undefined;
  if (TRUE.includes(value)) return true;
  if (FALSE.includes(value)) return false;
  throw errors.badRequest(
    `${name}: Invalid value: "${value}": strconv.ParseBool: parsing "${value}": invalid syntax`,
  );
}

function listOptionsInvalid(causes: ReturnType<typeof cause.forbidden>[]) {
  return errors.invalid('ListOptions', 'meta.k8s.io', '', causes);
}

/** Reads and validates a watch's query parameters (400/422 as the API server answers them). */
export function parseWatchQuery(
  def: ResourceDef,
  stored: ResourceDef,
  namespace: string | undefined,
  q: URLSearchParams,
  extraFieldSelector?: string,
): WatchRequest {
  const rvText = q.get('resourceVersion') ?? '';
  let resourceVersion: number | undefined;
  if (rvText !== '' && rvText !== '0') {
    if (!/^[0-9]+$/.test(rvText)) {
      throw errors.badRequest(
        `resourceVersion: Invalid value: "${rvText}": invalid resource version`,
      );
    }
    resourceVersion = Number(rvText);
  }
  const timeoutText = q.get('timeoutSeconds');
  let timeoutMs: number | undefined;
  if (timeoutText !== null && timeoutText !== '') {
    if (!/^[0-9]+$/.test(timeoutText)) {
      throw errors.badRequest(
        `timeoutSeconds: Invalid value: "${timeoutText}": must be a non-negative integer`,
      );
    }
    const seconds = Number(timeoutText);
    timeoutMs = seconds > 0 ? seconds * 1000 : undefined;
  }
  const allowBookmarks =
    parseBool('allowWatchBookmarks', q.get('allowWatchBookmarks')) ?? false;
  const sendInitialEvents = parseBool(
    'sendInitialEvents',
    q.get('sendInitialEvents'),
  );
  const match = q.get('resourceVersionMatch') ?? '';
  const causes: ReturnType<typeof cause.forbidden>[] = [];
  if (sendInitialEvents === undefined) {
    if (match !== '') {
      causes.push(
        cause.forbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    }
  } else {
    if (match !== 'NotOlderThan') {
      causes.push(
        cause.forbidden(
          'resourceVersionMatch',
          'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        ),
      );
    }
    if (!allowBookmarks) {
      causes.push(
        cause.forbidden(
          'allowWatchBookmarks',
          'sendInitialEvents requires setting allowWatchBookmarks to true',
        ),
      );
    }
  }
  if (causes.length) throw listOptionsInvalid(causes);
  const fieldText = [q.get('fieldSelector') ?? '', extraFieldSelector ?? '']
    .filter(Boolean)
    .join(',');
  return {
    def,
    stored,
    namespace,
    labels: parseLabelSelector(q.get('labelSelector') ?? ''),
    fields: fieldText
      ? parseFieldSelector(fieldText, KIND_FIELD_SELECTORS[def.kind])
      : [],
    resourceVersion,
    allowBookmarks,
    timeoutMs,
    sendInitialEvents,
  };
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One open watch: a streamed HTTP response fed by the cluster's change log. */
export class WatchStream {
  private unsubscribe?: () => void;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  /** Changes at or below this resourceVersion were sent already (or are not wanted). */
  private after = 0;
  private readonly resource: string;
  private readonly extraFields: readonly string[];

  constructor(
    private readonly res: ServerResponse,
    private readonly store: ClusterStore,
    private readonly req: WatchRequest,
    private readonly settings: WatchSettings,
    private readonly onEnd: (w: WatchStream) => void,
  ) {
    this.resource = `${req.stored.group}/${req.stored.plural}`;
    this.extraFields = KIND_FIELD_SELECTORS[req.def.kind] ?? [];
    res.once('close', () => this.dispose());
  }

  /** The connection the stream goes over: its HTTP/2 session, or its HTTP/1.1 socket. */
  connection(): object | undefined {
    return connectionOf(this.res);
  }

  /** Starts the stream: headers, initial or replayed events, then live changes. */
  start(): void {
    const { req, store } = this;
    this.res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      // no Content-Length: node:http sends HTTP/1.1 chunked, as the API server does; HTTP/2
      // frames the stream itself (and forbids the header)
    });
    this.res.flushHeaders();
    store.tick(); // the controllers' work up to now is part of the state a watch starts from
    const rv = req.resourceVersion;
    if (rv !== undefined && rv > Number(store.resourceVersion())) {
      this.waitForVersion(rv, Date.now() + this.settings.tooLargeWaitMs);
      return;
    }
    this.begin();
  }

  /** Sends the initial state or replays the history, then streams live changes. */
  private begin(): void {
    const { req, store } = this;
    const current = Number(store.resourceVersion());
    const fromState =
      req.sendInitialEvents === true ||
      (req.sendInitialEvents === undefined &&
        req.resourceVersion === undefined);
    if (fromState) {
      const list = store.list(req.stored, req.namespace, {});
      for (const item of list.items as JsonObject[]) {
        const object = {
          ...item,
          apiVersion: apiVersionOf(req.def),
          kind: req.def.kind,
        };
        if (this.passes(selectionOf(object, this.extraFields)))
          this.write('ADDED', object);
      }
      this.after = current;
      if (req.sendInitialEvents) {
        this.write('BOOKMARK', {
          ...this.bookmarkObject(current),
          metadata: {
            resourceVersion: String(current),
            annotations: { 'k8s.io/initial-events-end': 'true' },
          },
        });
      }
    } else if (req.resourceVersion === undefined) {
      this.after = current; // sendInitialEvents=false without a version: from now
    } else {
      const replay = store.changes.since(req.resourceVersion);
      if (!replay) {
        this.fail(
          failureStatus(
            410,
            'Expired',
            `too old resource version: ${req.resourceVersion} (${store.changes.oldestWatchable})`,
          ),
        );
        return;
      }
      this.after = req.resourceVersion;
      for (const event of replay) this.deliver(event);
    }
    this.goLive();
  }

  /** Ends the stream as the server's timeout does: a clean end of the response. */
  end(): void {
    if (this.closed) return;
    this.dispose();
    this.res.end();
  }

  /** Resets the connection (no clean end), as a cluster going down does. */
  reset(): void {
    if (this.closed) return;
    this.dispose();
    resetResponse(this.res);
  }

  /**
   * Stops sending anything, keeping the connection open: what a client sees when the
   * server stops answering (fault `timeout`). The client's own timeout or `stop()` ends it.
   */
  silence(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private dispose() {
    if (this.closed) return;
    this.closed = true;
    this.silence();
    this.onEnd(this);
  }

  private goLive() {
    const { req, settings } = this;
    this.unsubscribe = this.store.changes.subscribe(e => this.deliver(e));
    const timeoutMs =
      req.timeoutMs ?? settings.minTimeoutMs * (1 + Math.random());
    this.timer(timeoutMs, () => this.end());
    if (req.allowBookmarks) {
      const beat = () => {
        this.bookmark();
        this.timer(settings.bookmarkIntervalMs, beat);
      };
      this.timer(settings.bookmarkIntervalMs, beat);
      // kube-apiserver also sends one shortly before it ends the watch
      if (timeoutMs > 2000) this.timer(timeoutMs - 2000, () => this.bookmark());
    }
  }

  /**
   * A version the cluster has not reached: the API server waits (3 s) for its cache to catch
   * up, then answers a 504 ERROR. Checked every 50 ms here.
   */
  private waitForVersion(rv: number, deadline: number) {
    const current = Number(this.store.resourceVersion());
    if (current >= rv) {
      this.begin();
      return;
    }
    if (Date.now() < deadline) {
      this.timer(Math.min(50, deadline - Date.now()), () =>
        this.waitForVersion(rv, deadline),
      );
      return;
    }
    this.fail(
      failureStatus(
        504,
        'Timeout',
        `Too large resource version: ${rv}, current: ${current}`,
        {
          causes: [
            {
              reason: 'ResourceVersionTooLarge',
              message: 'Too large resource version',
            },
          ],
          retryAfterSeconds: 1,
        },
      ),
    );
  }

  private timer(ms: number, fn: () => void) {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.closed) fn();
    }, ms);
    this.timers.add(t);
  }

  private bookmark() {
    const rv = Number(this.store.resourceVersion());
    if (rv < this.after) return;
    this.write('BOOKMARK', this.bookmarkObject(rv));
  }

  private bookmarkObject(rv: number): JsonObject {
    return {
      kind: this.req.def.kind,
      apiVersion: apiVersionOf(this.req.def),
      metadata: { resourceVersion: String(rv) },
    };
  }

  /** An ERROR event then the end of the stream, as the API server's error watcher sends it. */
  private fail(status: KubeStatus) {
    this.write('ERROR', status as unknown as JsonObject);
    this.end();
  }

  private passes(selection: Selection | undefined): boolean {
    if (!selection) return false;
    if (
      this.req.namespace !== undefined &&
      selection.namespace !== this.req.namespace
    )
      return false;
    return (
      matches(this.req.labels, selection.labels) &&
      this.req.fields.every(r => {
        const actual = selection.fields[r.field] ?? '';
        return r.negate ? actual !== r.value : actual === r.value;
      })
    );
  }

  private deliver(event: ChangeEvent) {
    if (
      this.closed ||
      event.resource !== this.resource ||
      event.rv <= this.after
    )
      return;
    this.after = event.rv;
    const cur =
      event.type === 'DELETED' ? false : this.passes(event.object.selection);
    const prev =
      event.type === 'ADDED'
        ? false
        : this.passes((event.prev ?? event.object).selection);
    if (cur) {
      this.writeJson(prev ? 'MODIFIED' : 'ADDED', event.object.json);
    } else if (prev && event.type === 'DELETED') {
      this.writeJson('DELETED', event.object.json);
    } else if (prev) {
      // no longer matching: the previous state, at the event's resourceVersion
      const object = JSON.parse((event.prev ?? event.object).json);
      object.metadata.resourceVersion = String(event.rv);
      this.write('DELETED', object);
    }
  }

  /** Writes a stored object's JSON, under the requested version (a multi-version CRD). */
  private writeJson(type: EventType, json: string) {
    if (this.req.def === this.req.stored) {
      if (this.res.destroyed || this.res.writableEnded) return;
      this.res.write(`{"type":"${type}","object":${json}}\n`);
      return;
    }
    this.write(type, {
      ...JSON.parse(json),
      apiVersion: apiVersionOf(this.req.def),
    });
  }

  private write(type: EventType, object: JsonObject) {
    if (this.res.destroyed || this.res.writableEnded) return;
    this.res.write(`${JSON.stringify({ type, object })}\n`);
  }
}

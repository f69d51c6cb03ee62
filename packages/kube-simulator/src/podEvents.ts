/**
 * The core/v1 Events the simulated deployment, ReplicaSet, scheduler and kubelet controllers
 * record (podController.ts), kept as the API server keeps them: a repeat bumps `count`, and
 * they expire.
 */
import { asObject, clone, JsonObject, rfc3339 } from './util';
import {
  meta,
  nameOf,
  namespaceOf,
  PodControllerHost,
  uidOf,
} from './podObjects';
import { containersOf } from './podStatus';

/** Events live an hour on a real API server (`--event-ttl`); at most this many are kept. */
export const EVENT_TTL_MS = 60 * 60_000;
export const MAX_EVENTS = 1000;

export interface EventInput {
  involved: { kind: string; apiVersion: string; obj: JsonObject };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  component: string;
  host?: string;
  fieldPath?: string;
}

/**
 * Tells apart events recorded at the same millisecond: one count for the process, since each
 * controller pass has a recorder of its own and a held clock (the `now` option) gives every
 * pass the same time.
 */
let eventSerial = 0;

/** Records events as the API server's event sink does: a repeat bumps `count`. */
export class EventRecorder {
  /** The stored events by involved object, reason and message (read at the first record). */
  private index?: Map<string, JsonObject>;
  constructor(
    private readonly host: PodControllerHost,
    private readonly now: number,
  ) {}

  private static key(uid: unknown, reason: unknown, message: unknown): string {
    return JSON.stringify([uid, reason, message]);
  }

  record(input: EventInput): void {
    const { involved } = input;
    const uid = uidOf(involved.obj);
    if (!this.index) {
      this.index = new Map(
        this.host
          .all('Event')
          .map(e => [
            EventRecorder.key(
              asObject(e.involvedObject)?.uid,
              e.reason,
              e.message,
            ),
            e,
          ]),
      );
    }
    const key = EventRecorder.key(uid, input.reason, input.message);
    const existing = this.index.get(key);
    const ts = rfc3339(this.now);
    if (existing) {
      const next = clone(existing);
      next.count = Number(existing.count ?? 1) + 1;
      next.lastTimestamp = ts;
      this.index.set(key, this.host.save('Event', next));
      return;
    }
    eventSerial = (eventSerial + 1) % 1_000_000;
    const stamp = (BigInt(this.now) * 1_000_000n + BigInt(eventSerial))
      .toString(16)
      .padStart(16, '0');
    const saved = this.host.save('Event', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${nameOf(involved.obj)}.${stamp}`,
        namespace: namespaceOf(involved.obj),
      },
      involvedObject: {
        kind: involved.kind,
        namespace: namespaceOf(involved.obj),
        name: nameOf(involved.obj),
        uid,
        apiVersion: involved.apiVersion,
        resourceVersion: String(meta(involved.obj).resourceVersion ?? ''),
        ...(input.fieldPath ? { fieldPath: input.fieldPath } : {}),
      },
      reason: input.reason,
      message: input.message,
      source: {
        component: input.component,
        ...(input.host ? { host: input.host } : {}),
      },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      type: input.type,
      eventTime: null,
      reportingComponent: input.component,
      reportingInstance: input.host ?? '',
    });
    this.index.set(key, saved);
  }
}

export function scaledEvent(
  events: EventRecorder,
  deployment: JsonObject,
  rsName: string,
  from: number,
  to: number,
) {
  events.record({
    involved: { kind: 'Deployment', apiVersion: 'apps/v1', obj: deployment },
    type: 'Normal',
    reason: 'ScalingReplicaSet',
    message: `Scaled ${
      to > from ? 'up' : 'down'
    } replica set ${rsName} to ${to} from ${from}`,
    component: 'deployment-controller',
  });
}

export function podStartEvents(
  events: EventRecorder,
  pod: JsonObject,
  node: string,
) {
  events.record({
    involved: { kind: 'Pod', apiVersion: 'v1', obj: pod },
    type: 'Normal',
    reason: 'Scheduled',
    message: `Successfully assigned ${namespaceOf(pod)}/${nameOf(
      pod,
    )} to ${node}`,
    component: 'default-scheduler',
  });
  const { names, images } = containersOf(asObject(pod.spec));
  names.forEach((name, i) => {
    const base = {
      involved: { kind: 'Pod', apiVersion: 'v1', obj: pod },
      type: 'Normal' as const,
      component: 'kubelet',
      host: node,
      fieldPath: `spec.containers{${name}}`,
    };
    events.record({
      ...base,
      reason: 'Pulled',
      message: `Container image "${images[i]}" already present on machine`,
    });
    events.record({
      ...base,
      reason: 'Created',
      message: `Created container ${name}`,
    });
    events.record({
      ...base,
      reason: 'Started',
      message: `Started container ${name}`,
    });
  });
}

export function expireEvents(host: PodControllerHost, now: number) {
  const all = host.all('Event');
  const live = all.filter(e => {
    const last = Date.parse(String(e.lastTimestamp ?? ''));
    const expired = Number.isFinite(last) && now - last > EVENT_TTL_MS;
    if (expired) host.remove('Event', namespaceOf(e), nameOf(e));
    return !expired;
  });
  if (live.length > MAX_EVENTS) {
    const oldest = live
      .sort(
        (a, b) =>
          Date.parse(String(a.lastTimestamp)) -
            Date.parse(String(b.lastTimestamp)) ||
          nameOf(a).localeCompare(nameOf(b)),
      )
      .slice(0, live.length - MAX_EVENTS);
    for (const e of oldest) host.remove('Event', namespaceOf(e), nameOf(e));
  }
}

import type { LoggerService } from '@backstage/backend-plugin-api';
import type { KubernetesObject } from '@kubernetes/client-node';
import { isKubeStatus, describeKubeError } from '../kubernetes/requestOptions';

/** A list of one kind, as the API server answers it. */
export interface ListResult<T extends KubernetesObject> {
  items: T[];
  metadata?: { resourceVersion?: string };
}

/** Opens a watch (client-node's `Watch.watch`): resolves once the server answered. */
export type OpenWatch = (
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  onEvent: (type: string, object: any) => void,
  onDone: (error: unknown) => void,
) => Promise<{ abort(): void }>;

export interface ReflectorTimings {
  /** The server ends each watch after a random time in [this, 2 × this) (client-go: 5 min). */
  watchTimeoutSeconds: number;
  /** First wait after a failed list or watch; doubled up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** A kind the cluster forbids listing is tried again after this long. */
  forbiddenRetryMs: number;
}

export const DEFAULT_REFLECTOR_TIMINGS: ReflectorTimings = {
  watchTimeoutSeconds: 300,
  backoffMs: 1_000,
  maxBackoffMs: 30_000,
  forbiddenRetryMs: 5 * 60_000,
};

export type ReflectorState =
  /** Listing, or the watch is broken: the cache may be behind the cluster. */
  | 'syncing'
  /** The cache holds what the cluster holds, up to the open watch's delay. */
  | 'synced'
  /** The cluster refuses to list this kind (403): readers must ask the API. */
  | 'forbidden'
  | 'stopped';

export interface ReflectorOptions<T extends KubernetesObject> {
  /** What logs call it, e.g. `deployments on prod-1`. */
  name: string;
  kind: string;
  apiVersion: string;
  /** The collection's watch path, e.g. `/apis/apps/v1/deployments`. */
  path: string;
  labelSelector?: string;
  list: () => Promise<ListResult<T>>;
  watch: OpenWatch;
  /** An object was added, changed or removed (`next` undefined), by the watch or a relist. */
  onChange: (previous: T | undefined, next: T | undefined) => void;
  logger: LoggerService;
  timings?: Partial<ReflectorTimings>;
  /** A list ended: it succeeded, or the cluster forbids listing the kind. */
  onListed?: () => void;
}

/** A watch that ends sooner than this without an event is treated as a failure (client-go: 1 s). */
const QUICK_END_MS = 1_000;

/**
 * What the cache keeps of an object: all but `metadata.managedFields`, the server's record of
 * who set which field, which no compare reads and which is often the object's largest part.
 */
function trimmed<T extends KubernetesObject>(object: T): T {
  if (!object.metadata?.managedFields) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/**
 * The object as JSON has it: no undefined fields, timestamps as strings. One parsed from the
 * server's JSON (a plain object) already is; client-node's typed objects are copied.
 */
const plain = <T>(object: T): T =>
  Object.getPrototypeOf(object) === Object.prototype
    ? object
    : JSON.parse(JSON.stringify(object));

const keyOf = (o: KubernetesObject) =>
  `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * Keeps one kind of one cluster in memory, as client-go's reflector does: a list, then a watch
 * from the list's resourceVersion with bookmarks. A watch the server ends (its timeout) is opened
 * again from the last resourceVersion seen; a 410 Gone (that version is no longer kept) or any
 * other failure lists again, after a growing backoff for failures. A relist reports what changed
 * meanwhile as changes. A watch that stays silent longer than the server's own timeout is taken
 * for dead (a server that stopped answering) and opened again.
 */
export class Reflector<T extends KubernetesObject> {
  private readonly items = new Map<string, T>();
  private state: ReflectorState = 'syncing';
  private resourceVersion: string | undefined;
  private current: { abort(): void } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private failures = 0;
  /** Bumped by each list or watch started, so callbacks of an older one are ignored. */
  private generation = 0;
  private readonly timings: ReflectorTimings;
  private listedOnce = false;
  /** How many lists ran (the first one included). */
  lists = 0;

  constructor(private readonly options: ReflectorOptions<T>) {
    this.timings = { ...DEFAULT_REFLECTOR_TIMINGS, ...options.timings };
  }

  start(): void {
    void this.relist();
  }

  stop(): void {
    this.state = 'stopped';
    this.generation += 1;
    this.clearTimers();
    this.current?.abort();
    this.current = undefined;
    this.items.clear();
  }

  getState(): ReflectorState {
    return this.state;
  }

  /** A list has succeeded since the start, or the cluster forbids listing: the first reads are answerable. */
  settled(): boolean {
    return this.listedOnce || this.state === 'forbidden';
  }

  get(namespace: string, name: string): T | undefined {
    return this.items.get(`${namespace}/${name}`);
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  private clearTimers() {
    if (this.timer) clearTimeout(this.timer);
    if (this.watchdog) clearTimeout(this.watchdog);
    this.timer = undefined;
    this.watchdog = undefined;
  }

  private later(ms: number, fn: () => void) {
    if (this.state === 'stopped') return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(fn, ms);
    this.timer.unref?.();
  }

  private backoff(): number {
    const { backoffMs, maxBackoffMs } = this.timings;
    const ms = Math.min(maxBackoffMs, backoffMs * 2 ** this.failures);
    this.failures += 1;
    return ms * (0.8 + Math.random() * 0.4);
  }

  private async relist(): Promise<void> {
    if (this.state === 'stopped') return;
    const generation = ++this.generation;
    // Listing is a step of its own, over before the watch opens: a suspended async function
    // keeps its locals, and the list as the client returned it (over HTTP/1.1, class instances
    // and Dates, several times the size of what the cache keeps; the cache's previous content
    // too) would otherwise stay in memory until the watch opened, which waits its turn behind
    // the fleet's other lists when many clusters start.
    if (await this.listInto(generation)) await this.rewatch(generation);
  }

  /** Lists the kind into the cache; true when the list succeeded and is still the current one. */
  private async listInto(generation: number): Promise<boolean> {
    this.current?.abort();
    this.current = undefined;
    if (this.state !== 'forbidden') this.state = 'syncing';
    const { options } = this;
    let listed: ListResult<T>;
    try {
      this.lists += 1;
      listed = await options.list();
    } catch (error) {
      if (generation !== this.generation) return false;
      if (isKubeStatus(error, 403)) {
        if (this.state !== 'forbidden')
          options.logger.warn(
            `Fleet may not list ${options.name}: read one by one instead`,
          );
        this.state = 'forbidden';
        this.items.clear();
        this.later(this.timings.forbiddenRetryMs, () => void this.relist());
        options.onListed?.();
        return false;
      }
      this.state = 'syncing';
      options.logger.debug(
        `List of ${options.name} failed: ${describeKubeError(error)}`,
      );
      this.later(this.backoff(), () => void this.relist());
      return false;
    }
    if (generation !== this.generation) return false;
    const previous = new Map(this.items);
    this.items.clear();
    for (const item of listed.items) {
      // List items carry no kind and apiVersion; watch events do. client-node makes them class
      // instances with every field the type knows, most of them undefined, and Dates: kept as
      // the plain JSON a watch event gives (or a list over HTTP/2 gives), they take about a
      // quarter less memory.
      const object = trimmed({
        ...plain(item),
        kind: options.kind,
        apiVersion: options.apiVersion,
      } as T);
      this.items.set(keyOf(object), object);
    }
    this.resourceVersion = listed.metadata?.resourceVersion;
    this.state = 'synced';
    // The first list reports nothing: whoever starts the watches compares what is there.
    const first = !this.listedOnce;
    this.listedOnce = true;
    for (const [key, object] of first ? [] : this.items) {
      const before = previous.get(key);
      previous.delete(key);
      if (
        before?.metadata?.resourceVersion !== object.metadata?.resourceVersion
      )
        options.onChange(before, object);
    }
    for (const gone of first ? [] : previous.values())
      options.onChange(gone, undefined);
    options.onListed?.();
    return true;
  }

  private async rewatch(generation: number): Promise<void> {
    if (this.state === 'stopped' || generation !== this.generation) return;
    const { options, timings } = this;
    const timeoutSeconds = Math.round(
      timings.watchTimeoutSeconds * (1 + Math.random()),
    );
    let ended = false;
    // Whatever ends this watch: the next step runs once.
    const end = (next: 'rewatch' | 'relist' | 'backoff') => {
      if (ended || generation !== this.generation) return;
      ended = true;
      if (this.watchdog) clearTimeout(this.watchdog);
      this.current?.abort();
      this.current = undefined;
      if (next === 'rewatch') {
        void this.rewatch(generation);
      } else if (next === 'relist') {
        void this.relist();
      } else {
        // Broken: the cache may miss changes until a watch is open again.
        this.state = 'syncing';
        this.later(this.backoff(), () => void this.rewatch(generation));
      }
    };
    const alive = () => {
      if (this.watchdog) clearTimeout(this.watchdog);
      // The server ends the watch by timeoutSeconds; silence past that means it stopped answering.
      this.watchdog = setTimeout(
        () => end('backoff'),
        (timeoutSeconds + 30) * 1000,
      );
      this.watchdog.unref?.();
    };
    alive();
    const openedAt = Date.now();
    let events = 0;
    try {
      const handle = await options.watch(
        options.path,
        {
          labelSelector: options.labelSelector,
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
        },
        (type, object) => {
          if (ended || generation !== this.generation) return;
          alive();
          events += 1;
          this.failures = 0; // the watch works: the next failure waits the least again
          this.onEvent(type, object, end);
        },
        error => {
          if (error) {
            options.logger.debug(
              `Watch of ${options.name} broke: ${describeKubeError(error)}`,
            );
            // 410 as an HTTP answer (not an ERROR event) also means: list again.
            end(
              (error as { statusCode?: number }).statusCode === 410
                ? 'relist'
                : 'backoff',
            );
          } else if (events === 0 && Date.now() - openedAt < QUICK_END_MS) {
            // Ended at once with nothing said (a proxy closing streams): not the server's
            // timeout. Wait as for a failure rather than reopen in a tight loop.
            end('backoff');
          } else {
            this.failures = 0;
            end('rewatch'); // the server's timeout: go on from the last version seen
          }
        },
      );
      if (ended || generation !== this.generation) {
        handle.abort();
        return;
      }
      this.current = handle;
      if (this.state === 'syncing') this.state = 'synced';
    } catch (error) {
      end('backoff');
    }
  }

  private onEvent(
    type: string,
    object: any,
    end: (next: 'rewatch' | 'relist' | 'backoff') => void,
  ) {
    const { options } = this;
    const rv: string | undefined = object?.metadata?.resourceVersion;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED': {
        const key = keyOf(object);
        const before = this.items.get(key);
        const kept = trimmed(object as T);
        this.items.set(key, kept);
        if (rv) this.resourceVersion = rv;
        options.onChange(before, kept);
        return;
      }
      case 'DELETED': {
        const key = keyOf(object);
        const before = this.items.get(key) ?? (object as T);
        this.items.delete(key);
        if (rv) this.resourceVersion = rv;
        options.onChange(before, undefined);
        return;
      }
      case 'BOOKMARK':
        if (rv) this.resourceVersion = rv;
        return;
      case 'ERROR': {
        const code = object?.code;
        if (code === 410) {
          options.logger.debug(
            `Watch of ${options.name}: ${
              object?.message ?? '410 Gone'
            }; listing again`,
          );
          end('relist');
        } else {
          options.logger.debug(
            `Watch of ${options.name} ended with ${code}: ${
              object?.message ?? ''
            }`,
          );
          end('backoff');
        }
        return;
      }
      default:
    }
  }
}

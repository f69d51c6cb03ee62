/*
 * The health cycle shared by replicas (fleet.health.shards): two real backend processes on one
 * PostgreSQL database, each with Backstage's scheduler running its own cycle over the shards it
 * holds, against 10,000 simulated clusters of which 10 % time out. Then the holder of shard 0
 * (discovery and the fleet summary are its work too) is SIGKILLed in the middle of a cycle.
 *
 * Everything is read from the database the replicas write, not from the replicas themselves:
 * - a cycle writes `last_probe_at` = its start time on every cluster it probed (one value per
 *   cycle and replica) and `updated_at` = the time of each write, so a poll every second groups
 *   the clusters by `last_probe_at`: a cycle's start, its clusters, its end (the last write) and,
 *   from the shard leases in `fleet_locks`, the replica that ran it;
 * - each cluster's successive `last_probe_at` values give the gaps between its probes;
 * - the shard leases `health-cycle:shard-<i>` (polled every 100 ms after the kill) give the time
 *   until the survivor holds every shard.
 *
 * The bound is bench/cycle.ts's with the replicas' concurrency added up:
 * ⌈down / (c × replicas)⌉ × timeout + ⌈N / (c × replicas)⌉ × RTT, the RTT measured as there (the
 * median of 30 sequential probes of healthy clusters from this process, before and after).
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  establishedConnections,
  createFleet,
  createTempDatabase,
  loadAverage,
  median,
  ms,
  onCleanup,
  sleep,
  startBackendProcess,
  startSimProcess,
  table,
  type BackendProcess,
} from '@cnp/fleet-harness';
// The bench reads which shard a cluster is in, as the worker computes it.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import { shardOf } from '@cnp/plugin-fleet-backend/testUtils';
import { waitFor } from './lib/waitFor';

const SHARD_PREFIX = 'health-cycle:shard-';
/** How long the backend's cluster clients keep an idle connection. */
const CLIENT_IDLE_MS = 30_000;

/** One replica's cycle, as the database shows it. */
export interface ObservedCycle {
  /** The replica (its process id) that ran it. */
  pid: number;
  /** Its start: the `last_probe_at` it wrote (ms since the epoch). */
  start: number;
  /** Its last write (`updated_at`). */
  end: number;
  durationMs: number;
  /** Clusters it probed. */
  probed: number;
  /** Of which timing out. */
  down: number;
}

export interface ShardsPair {
  cycles: ObservedCycle[];
  /**
   * The fleet's cycle: the longest of the replicas' cycles, which run at the same time, each on
   * its own schedule (every replica's first cycle at its start).
   */
  cycleMs: number;
  /** From the first replica's start to the last one's end: the cycle plus the schedules' offset. */
  spanMs: number;
  load: string;
  /** Each replica's established connections to the simulated clusters after the cycles. */
  connections?: Array<{ pid: number; connections: number }>;
}

export interface ShardsResult {
  clusters: number;
  down: number;
  replicas: number;
  shards: number;
  leaseMs: number;
  intervalMs: number;
  probeTimeoutMs: number;
  concurrency: number;
  simStartMs: number;
  simRssMiB: number;
  /** From the backends' start until every cluster was registered and probed at least twice. */
  settleMs: number;
  /** With watches: from the start until every ONLINE cluster had a connection from a replica. */
  watchesSettledMs?: number;
  /**
   * The RTT of the bound: on a new connection when `rttCold` (interval > idle timeout, and no
   * watches: with watches, the ONLINE clusters' probes go over the watches' connections).
   */
  rttMs: number;
  rttCold: boolean;
  warmRttMs: number;
  coldRttMs: number;
  rttSamples: number;
  pairs: ShardsPair[];
  medianCycleMs: number;
  /** The slowest steady cycle (the longest replica's): the verdict's. */
  worstCycleMs: number;
  boundMs: number;
  /** worstCycleMs / boundMs. */
  withinBound: number;
  kill: {
    pid: number;
    survivorPid: number;
    /** Shards the killed replica held. */
    shardsHeld: number[];
    clustersHeld: number;
    /** From the start of its cycle (predicted from its schedule) to the kill. */
    intoCycleMs: number;
    /** Its previous cycle's duration. */
    previousCycleMs: number;
    /** Its clusters the killed cycle had probed (the simulator's request counts). */
    probedBeforeKill: number;
    /** When its shard leases would expire, after the kill (earliest, latest). */
    leasesExpireMs: [number, number];
    /** From the kill until the survivor held every shard. */
    takeoverMs: number;
    load: string;
    /** The survivor's first cycle over the whole fleet. */
    survivorCycle?: ObservedCycle;
    /** Its bound with one replica: ⌈down / c⌉ × timeout + ⌈N / c⌉ × RTT. */
    survivorBoundMs: number;
    /** The survivor's schedule's lag behind the killed one's (−I/2, I/2]. */
    phaseLagMs: number;
    /** Per cluster, the gap between the last probe before the kill and the first after it. */
    maxGapMs: number;
    maxGapCycles: number;
    maxGapKilledShardsMs: number;
    maxGapSurvivorShardsMs: number;
    /** The most cycles a cluster missed: round(gap / interval) - 1. */
    maxMissed: number;
    /** Clusters that missed more than one cycle. */
    overOneMissed: number;
    /** From the kill until every cluster had been probed again. */
    allProbedAgainMs: number;
  };
}

/**
 * The first port from `from` (below 47500) that can be listened on now and is not in `taken`:
 * in this range, outgoing connections' ephemeral ports (32768–60999) can hold a fixed one.
 */
async function freePort(from: number, taken: number[] = []): Promise<number> {
  for (let port = from; port < 47500; port++) {
    if (taken.includes(port)) continue;
    const free = await new Promise<boolean>(resolve => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in ${from}–47499`);
}

interface Lease {
  name: string;
  holder: string;
  expiresAt: number;
}

interface CycleSeen {
  start: number;
  pid?: number;
  count: number;
  end: number;
}

export async function benchShards(options: {
  clusters: number;
  downFraction: number;
  replicas: number;
  shards: number;
  leaseMs: number;
  intervalMs: number;
  probeTimeoutMs: number;
  concurrency: number;
  /** Steady cycles measured (on every replica) before the kill. */
  measuredPairs: number;
  /** First port of this benchmark's range: the simulator, then one per replica (the next free). */
  basePort: number;
  /**
   * `fleet.reconcile.watch` of the replicas: with it (the default), each watches the clusters of
   * its shards, and its probes go over those watches' connections.
   */
  watch: boolean;
  log: (line: string) => void;
}): Promise<ShardsResult> {
  const { clusters: n, replicas, shards, intervalMs, log } = options;
  const db = await createTempDatabase('fleet_bench');
  const ports = [await freePort(options.basePort)];
  while (ports.length < replicas + 1)
    ports.push(await freePort(ports[ports.length - 1] + 1));
  const sim = await startSimProcess({ clusters: n, port: ports[0] });
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'fleet-bench-shards-'));
  const backends: BackendProcess[] = [];
  let polling = true;
  let poller: Promise<void> = Promise.resolve();
  try {
    const knex = db.knex({ poolMax: 4 });
    const step = Math.round(1 / options.downFraction);
    const downNames = sim.names.filter((_, i) => (i + 1) % step === 0);
    const down = new Set(downNames);
    await sim.setFault(downNames, { mode: 'timeout' });
    log(
      `  simulator: ${n} clusters started in ${ms(
        sim.startMs,
      )} (${sim.rssMiB.toFixed(0)} MiB RSS), one process; ${
        downNames.length
      } of them time out (every ${step}th)`,
    );

    // ---------------------------------------------------------- the replicas, started together
    // With watches (the backend's default), each replica watches the clusters of the shards it
    // holds, and probes them over those watches' connections; without, each cycle's probes
    // open new connections (the interval is over the clients' 30 s idle timeout).
    const fleet = {
      reconcile: { watch: options.watch },
      health: {
        interval: { milliseconds: intervalMs },
        probeTimeout: { milliseconds: options.probeTimeoutMs },
        concurrency: options.concurrency,
        shards,
        shardLease: { milliseconds: options.leaseMs },
      },
    };
    const token = randomBytes(24).toString('hex');
    const env = (i: number, kubeconfigDir: string) => ({
      FLEET_BENCH_DB: db.connection,
      FLEET_BENCH_KUBECONFIG_DIR: kubeconfigDir,
      FLEET_BENCH_TOKEN: token,
      FLEET_BENCH_FLEET: JSON.stringify(fleet),
      FLEET_BENCH_PORT: String(ports[1 + i]),
      LOG_LEVEL: 'info',
    });
    // Backends started together on an empty database race on its migrations (Backstage's
    // scheduler's and Fleet's: "duplicate key value violates unique constraint"): one backend
    // with no cluster to discover migrates it first, then stops (letting its leases go).
    const empty = await mkdtemp(path.join(tmp, 'no-clusters-'));
    // On a shared machine a backend's start has taken minutes: a generous bound.
    const startTimeoutMs = 600_000;
    const migrator = await startBackendProcess(env(0, empty), {
      logFile: path.join(tmp, 'migrations.log'),
      startTimeoutMs,
    });
    await migrator.stop();
    const started = Date.now();
    backends.push(
      ...(await Promise.all(
        Array.from({ length: replicas }, (_, i) =>
          startBackendProcess(env(i, sim.kubeconfigDir), {
            logFile: path.join(tmp, `backend-${i + 1}.log`),
            startTimeoutMs,
          }),
        ),
      )),
    );
    for (const backend of backends) onCleanup(() => backend.kill());
    const pids = backends.map(b => b.pid);
    log(
      `  ${replicas} backend processes (pids ${pids.join(
        ', ',
      )}) on one PostgreSQL database, started together in ${ms(
        Date.now() - started,
      )}: fleet.health ${JSON.stringify(fleet.health)}, fleet.reconcile.watch ${
        options.watch
      }; logs in ${tmp}`,
    );
    const pidOf = (holder: string) =>
      pids.find(pid => holder.includes(`-${pid}-`));

    // ---------------------------------------------------------- the poller
    const cycles = new Map<number, CycleSeen>();
    const history = new Map<string, number[]>();
    let leases: Lease[] = [];
    let rows = 0;
    let unknown = 0;
    const readLeases = async (): Promise<Lease[]> =>
      (
        await knex('fleet_locks')
          .where('name', 'like', `${SHARD_PREFIX}%`)
          .select('name', 'holder', 'expires_at')
      ).map(l => ({
        name: l.name,
        holder: l.holder,
        expiresAt: new Date(l.expires_at).getTime(),
      }));
    const holderOfShard = (shard: number) => {
      const lease = leases.find(l => l.name === `${SHARD_PREFIX}${shard}`);
      return lease && lease.expiresAt > Date.now()
        ? pidOf(lease.holder)
        : undefined;
    };
    const pollOnce = async () => {
      leases = await readLeases();
      const groups = await knex('fleet_clusters')
        .whereNotNull('last_probe_at')
        .groupBy('last_probe_at')
        .select('last_probe_at')
        .min({ first: 'name' })
        .max({ end: 'updated_at' })
        .count({ n: '*' });
      for (const g of groups as any[]) {
        const start = new Date(g.last_probe_at).getTime();
        const seen = cycles.get(start) ?? {
          start,
          pid: holderOfShard(shardOf(g.first, shards)),
          count: 0,
          end: 0,
        };
        // A lease read between a holder's expiry and its renewal names nobody: asked again.
        seen.pid ??= holderOfShard(shardOf(g.first, shards));
        seen.count = Math.max(seen.count, Number(g.n));
        seen.end = Math.max(seen.end, new Date(g.end).getTime());
        cycles.set(start, seen);
      }
      const all = await knex('fleet_clusters').select(
        'name',
        'last_probe_at',
        'status',
      );
      rows = all.length;
      unknown = 0;
      for (const row of all) {
        if (row.status === 'UNKNOWN') unknown += 1;
        if (!row.last_probe_at) continue;
        const t = new Date(row.last_probe_at).getTime();
        const list = history.get(row.name);
        if (!list) history.set(row.name, [t]);
        else if (list[list.length - 1] !== t) list.push(t);
      }
    };
    poller = (async () => {
      while (polling) {
        await pollOnce().catch(error =>
          log(`  poll failed: ${(error as Error).message}`),
        );
        await sleep(1000);
      }
    })();

    // The clusters whose last probe was in cycle `start`.
    const membersOf = (start: number) =>
      [...history].filter(([, list]) => list.includes(start)).map(([c]) => c);
    const observed = (c: CycleSeen): ObservedCycle => ({
      pid: c.pid ?? -1,
      start: c.start,
      end: c.end,
      durationMs: c.end - c.start,
      probed: c.count,
      down: membersOf(c.start).filter(name => down.has(name)).length,
    });
    const cycleLine = (c: ObservedCycle) =>
      `pid ${c.pid}: ${c.probed} clusters (${c.down} timing out) in ${ms(
        c.durationMs,
      )}`;

    // ---------------------------------------------------------- settle: registered, no UNKNOWN
    const settledAt = await waitFor(
      `${n} clusters registered and none UNKNOWN`,
      async () => (rows === n && unknown === 0 ? Date.now() : undefined),
      // The first cycles register every cluster, one transaction each: 10,000 took 18 minutes
      // on a shared machine.
      45 * 60_000,
    );
    const settleMs = settledAt - started;
    log(
      `  every cluster registered and probed (none UNKNOWN) ${ms(
        settleMs,
      )} after the start`,
    );

    // ---------------------------------------------------------- settle: the watches are open
    // With watches, every replica first lists and watches the clusters of its shards (five
    // lists and five watches each, 16 at a time per replica, all answered by the one simulator
    // process on the machine's 2 cores): a start-up storm a fleet goes through once, not what a
    // health cycle costs. The steady cycles are measured once the simulator serves the five
    // watches of (nearly) every ONLINE cluster, and their number has stopped growing.
    let watchesSettledMs: number | undefined;
    let measuredFrom = settledAt;
    if (options.watch) {
      const online = n - downNames.length;
      const wanted = 5 * online;
      let last = -1;
      const reached = await waitFor(
        `the simulator serving the ${wanted} watches of the ${online} ONLINE clusters`,
        async () => {
          const now = await sim.openWatches();
          const steady = now >= wanted * 0.98 && now <= last;
          last = now;
          return steady ? Date.now() : undefined;
        },
        15 * 60_000,
        10_000,
      ).catch(() => undefined);
      watchesSettledMs = reached ? reached - started : undefined;
      if (reached) measuredFrom = reached;
      log(
        reached
          ? `  watches open: ${last} of the ${wanted} (five per ONLINE cluster), ${ms(
              watchesSettledMs!,
            )} after the start`
          : `  watches not all open after 15 min (${last} of the ${wanted}): cycles measured anyway`,
      );
    }

    // The probe round trip, as bench/cycle.ts measures it, from this process.
    const prober = await createFleet({
      knex: db.knex({ poolMax: 2 }),
      kubeconfigDir: sim.kubeconfigDir,
      health: {
        probeTimeoutMs: options.probeTimeoutMs,
        concurrency: options.concurrency,
      },
    });
    const healthy = (await prober.stores.clusters.listClusters())
      .filter(c => !down.has(c.name))
      .slice(0, 30);
    // Warm: on the connection of the sample before; cold: on a new one (TLS session resumed),
    // as every cycle's probes are when the interval is over the clients' 30 s idle timeout.
    const rttSamples: number[] = [];
    const coldRttSamples: number[] = [];
    const sampleRtt = async () => {
      for (const cold of [false, true]) {
        for (const cluster of healthy) {
          if (cold) prober.clients.closeIdleConnections();
          const t0 = performance.now();
          const outcome = await prober.clients.probe(
            cluster,
            options.probeTimeoutMs,
          );
          if (outcome.kind === 'success')
            (cold ? coldRttSamples : rttSamples).push(performance.now() - t0);
        }
      }
      prober.clients.closeIdleConnections();
    };

    // ---------------------------------------------------------- steady cycles on both replicas
    /** Cycles of different replicas less than half an interval apart that cover every cluster. */
    const completePairs = (after: number): CycleSeen[][] => {
      const list = [...cycles.values()]
        .filter(c => c.start > after && c.pid !== undefined)
        .sort((a, b) => a.start - b.start);
      const found: CycleSeen[][] = [];
      const used = new Set<CycleSeen>();
      for (const c of list) {
        if (used.has(c)) continue;
        const group = [c];
        for (const other of list) {
          if (
            other !== c &&
            !used.has(other) &&
            Math.abs(other.start - c.start) < intervalMs / 2 &&
            !group.some(g => g.pid === other.pid)
          )
            group.push(other);
        }
        const covered = group.reduce((sum, g) => sum + g.count, 0);
        if (group.length === replicas && covered === n) {
          group.forEach(g => used.add(g));
          found.push(group);
        }
      }
      return found;
    };
    const pairs: ShardsPair[] = [];
    for (let i = 0; i < options.measuredPairs; i++) {
      const group = await waitFor(
        `steady cycle ${i + 1} on every replica`,
        async () => completePairs(measuredFrom)[i],
        // A loaded machine's cycles overrun the interval: the next one starts at once.
        8 * intervalMs,
      );
      // Its last writes: the poll after the one that saw it complete.
      await sleep(1500);
      const cyclesOf = group
        .map(c => observed(cycles.get(c.start)!))
        .sort((a, b) => a.start - b.start);
      const pair: ShardsPair = {
        cycles: cyclesOf,
        cycleMs: Math.max(...cyclesOf.map(c => c.durationMs)),
        spanMs:
          Math.max(...cyclesOf.map(c => c.end)) -
          Math.min(...cyclesOf.map(c => c.start)),
        load: loadAverage(),
      };
      // Each replica's connections to the clusters: with watches, one per cluster it watches.
      pair.connections = await Promise.all(
        pids.map(async pid => ({
          pid,
          connections:
            (await establishedConnections(pid, [ports[0]]))?.length ?? -1,
        })),
      );
      pairs.push(pair);
      log(
        `  connections to the clusters: ${pair.connections
          .map(c => `pid ${c.pid}: ${c.connections}`)
          .join('; ')}`,
      );
      log(
        `  steady cycle ${i + 1}: ${ms(
          pair.cycleMs,
        )} (the longest replica's); ${ms(
          pair.spanMs,
        )} from the first start to the last write; ${cyclesOf
          .map(cycleLine)
          .join('; ')}; starts ${ms(
          cyclesOf[cyclesOf.length - 1].start - cyclesOf[0].start,
        )} apart; load ${pair.load}`,
      );
      // Between cycles, nothing else running: the round trip.
      if (i === 0) await sampleRtt();
    }

    // ---------------------------------------------------------- the kill
    leases = await readLeases();
    const victimPid = holderOfShard(0);
    if (victimPid === undefined) throw new Error('nobody holds shard 0');
    const victim = backends.find(b => b.pid === victimPid)!;
    const survivorPid = pids.find(p => p !== victimPid)!;
    const victimShards = leases
      .filter(l => pidOf(l.holder) === victimPid)
      .map(l => Number(l.name.slice(SHARD_PREFIX.length)))
      .sort((a, b) => a - b);
    const victimNames = sim.names.filter(name =>
      victimShards.includes(shardOf(name, shards)),
    );
    const lastOf = (pid: number) =>
      [...cycles.values()]
        .filter(c => c.pid === pid)
        .sort((a, b) => b.start - a.start)[0];
    const victimLast = lastOf(victimPid);
    const survivorLast = lastOf(survivorPid);
    // Its next cycle starts one interval after the last (the scheduler counts start to start).
    const nextStart = victimLast.start + intervalMs;
    const previousCycleMs = victimLast.end - victimLast.start;
    const killAt = nextStart + previousCycleMs / 2;
    await sleep(Math.max(0, nextStart - 3000 - Date.now()));
    const countsBefore = await sim.requestCounts(victimNames);
    await sleep(Math.max(0, killAt - Date.now()));
    const killedAt = Date.now();
    await victim.kill();
    const load = loadAverage();
    const countsAfter = await sim.requestCounts(victimNames);
    const probedBeforeKill = victimNames.filter(
      name => countsAfter[name] > countsBefore[name],
    ).length;
    const victimLeases = (await readLeases()).filter(
      l => pidOf(l.holder) === victimPid,
    );
    const expiries = victimLeases.map(l => l.expiresAt - killedAt);
    log(
      `  SIGKILL of pid ${victimPid} (holder of shards ${victimShards.join(
        ', ',
      )}: ${victimNames.length} clusters) ${ms(
        killedAt - nextStart,
      )} into its cycle (its previous one took ${ms(
        previousCycleMs,
      )}; it had probed ${probedBeforeKill} of its clusters); its shard leases expire ${ms(
        Math.min(...expiries),
      )}–${ms(Math.max(...expiries))} after the kill; load ${load}`,
    );

    // Until the survivor holds every shard.
    const takeoverAt = await waitFor(
      'the survivor to hold every shard',
      async () => {
        const now = Date.now();
        const held = (await readLeases()).filter(
          l => pidOf(l.holder) === survivorPid && l.expiresAt > now,
        );
        return held.length === shards ? now : undefined;
      },
      4 * options.leaseMs,
    );
    const takeoverMs = takeoverAt - killedAt;
    log(
      `  pid ${survivorPid} holds all ${shards} shards ${ms(
        takeoverMs,
      )} after the kill (shard lease ${ms(options.leaseMs)}, claims every ${ms(
        options.leaseMs / 3,
      )})`,
    );

    // Until every cluster has been probed after the kill (and that cycle written).
    const allAgainAt = await waitFor(
      'every cluster probed after the kill',
      async () =>
        history.size === n &&
        [...history.values()].every(list => list[list.length - 1] > killedAt)
          ? Date.now()
          : undefined,
      4 * intervalMs + 2 * options.leaseMs,
    );
    await sleep(1500);
    await sampleRtt();
    polling = false;
    await poller;

    // The survivor's first cycle over the whole fleet, and the gaps around the kill.
    const survivorCycle = [...cycles.values()]
      .filter(c => c.pid === survivorPid && c.start > takeoverAt - 1)
      .sort((a, b) => a.start - b.start)
      .find(c => c.count === n);
    let phaseLagMs =
      (((survivorLast.start - victimLast.start) % intervalMs) + intervalMs) %
      intervalMs;
    if (phaseLagMs > intervalMs / 2) phaseLagMs -= intervalMs;
    const gapAround = (name: string) => {
      const list = history.get(name) ?? [];
      const before = list.filter(t => t <= killedAt);
      const after = list.filter(t => t > killedAt);
      if (!before.length || !after.length) return NaN;
      return after[0] - before[before.length - 1];
    };
    const victimSet = new Set(victimNames);
    const gaps = sim.names.map(name => ({
      name,
      gap: gapAround(name),
      killed: victimSet.has(name),
    }));
    const maxOf = (list: typeof gaps) => Math.max(...list.map(g => g.gap));
    const maxGapMs = maxOf(gaps);
    // A cluster probed every interval that goes `gap` without a probe missed
    // round(gap / interval) - 1 cycles (the schedules' jitter is milliseconds).
    const missed = (gap: number) => Math.round(gap / intervalMs) - 1;
    const warmRttMs = median(rttSamples);
    // Each cycle starts on new connections when the interval is over the clients' idle timeout,
    // unless the clusters are watched: then their probes go over the watches' open connections.
    const cold = intervalMs > CLIENT_IDLE_MS && !options.watch;
    const rttMs = cold ? median(coldRttSamples) : warmRttMs;
    const groupConcurrency = options.concurrency * replicas;
    const boundMs =
      Math.ceil(downNames.length / groupConcurrency) * options.probeTimeoutMs +
      Math.ceil(n / groupConcurrency) * rttMs;
    const medianCycleMs = median(pairs.map(p => p.cycleMs));
    const worstCycleMs = Math.max(...pairs.map(p => p.cycleMs));
    const result: ShardsResult = {
      clusters: n,
      down: downNames.length,
      replicas,
      shards,
      leaseMs: options.leaseMs,
      intervalMs,
      probeTimeoutMs: options.probeTimeoutMs,
      concurrency: options.concurrency,
      simStartMs: sim.startMs,
      simRssMiB: sim.rssMiB,
      settleMs,
      watchesSettledMs,
      rttMs,
      rttCold: cold,
      warmRttMs,
      coldRttMs: median(coldRttSamples),
      rttSamples: rttSamples.length,
      pairs,
      medianCycleMs,
      worstCycleMs,
      boundMs,
      withinBound: worstCycleMs / boundMs,
      kill: {
        pid: victimPid,
        survivorPid,
        shardsHeld: victimShards,
        clustersHeld: victimNames.length,
        intoCycleMs: killedAt - nextStart,
        previousCycleMs,
        probedBeforeKill,
        leasesExpireMs: [Math.min(...expiries), Math.max(...expiries)],
        takeoverMs,
        load,
        survivorCycle: survivorCycle ? observed(survivorCycle) : undefined,
        // The survivor probes the clusters it took over before its reconcile watches them: on
        // new connections when the interval is over the idle timeout, watches or not.
        survivorBoundMs:
          Math.ceil(downNames.length / options.concurrency) *
            options.probeTimeoutMs +
          Math.ceil(n / options.concurrency) *
            (intervalMs > CLIENT_IDLE_MS ? median(coldRttSamples) : warmRttMs),
        phaseLagMs,
        maxGapMs,
        maxGapCycles: maxGapMs / intervalMs,
        maxGapKilledShardsMs: maxOf(gaps.filter(g => g.killed)),
        maxGapSurvivorShardsMs: maxOf(gaps.filter(g => !g.killed)),
        maxMissed: Math.max(...gaps.map(g => missed(g.gap))),
        overOneMissed: gaps.filter(g => !(missed(g.gap) <= 1)).length,
        allProbedAgainMs: allAgainAt - killedAt,
      },
    };
    const k = result.kill;
    log(
      `  the survivor's first cycle over all ${n} clusters: ${
        k.survivorCycle ? cycleLine(k.survivorCycle) : 'not seen'
      } (bound with one replica ${ms(k.survivorBoundMs)})`,
    );
    log(
      `  gap between a cluster's last probe before the kill and its first after: max ${ms(
        maxGapMs,
      )} = ${k.maxGapCycles.toFixed(
        2,
      )} intervals (the killed replica's clusters ${ms(
        k.maxGapKilledShardsMs,
      )}, the survivor's ${ms(
        k.maxGapSurvivorShardsMs,
      )}); the survivor's schedule lags the killed one's by ${ms(
        phaseLagMs,
      )}; at most ${k.maxMissed} cycle(s) missed (round(gap / interval) - 1), ${
        k.overOneMissed
      } clusters missed more than one`,
    );
    log(
      `  probe round trip ${ms(warmRttMs)} on an open connection, ${ms(
        result.coldRttMs,
      )} on a new one (medians of ${
        rttSamples.length
      } sequential probes of healthy clusters each, after the first steady cycle and at the end); the bound uses the ${
        cold
          ? "second: the interval is over the clients' 30 s idle timeout, so each cycle opens new connections"
          : options.watch
          ? "first: the watched clusters' probes go over their watches' open connections"
          : 'first'
      }`,
    );
    return result;
  } finally {
    polling = false;
    await poller.catch(() => undefined);
    for (const backend of backends) await backend.stop().catch(() => undefined);
    await sim.stop();
    await db.drop();
  }
}

/** The summary lines of bench/run.ts: two tables and whether each bound holds. */
export function shardsSummary(r: ShardsResult): string {
  const k = r.kill;
  const verdict = (ok: boolean) => (ok ? 'holds' : 'MISSED');
  const splits = r.pairs.map(p =>
    p.cycles.map(c => `${c.probed} (${c.down})`).join(' / '),
  );
  const shares = r.pairs.flatMap(p => p.cycles.map(c => c.probed / r.clusters));
  const even = shares.every(s => Math.abs(s - 1 / r.replicas) <= 0.05);
  const cycleTable = table(
    [
      'N',
      'timing out',
      'replicas × c',
      'steady cycle: longest replica',
      'bound',
      'cycle / bound',
      'first start → last write',
      'probed per replica (timing out)',
      'per replica cycle',
      r.rttCold ? 'RTT (new connection)' : 'RTT',
      'load',
    ],
    r.pairs.map((p, i) => [
      String(r.clusters),
      String(r.down),
      `${r.replicas} × ${r.concurrency}`,
      `${i + 1}: ${ms(p.cycleMs)}${
        p.cycleMs === r.worstCycleMs ? ' (worst)' : ''
      }`,
      i === 0 ? ms(r.boundMs) : '',
      `${(p.cycleMs / r.boundMs).toFixed(2)}×`,
      ms(p.spanMs),
      splits[i],
      p.cycles.map(c => ms(c.durationMs)).join(' / '),
      i === 0 ? ms(r.rttMs) : '',
      p.load,
    ]),
  );
  const killTable = table(
    [
      'killed',
      'into its cycle',
      'its leases expire',
      'survivor holds all shards',
      'shard lease',
      'max gap around the kill',
      'killed shards / others',
      'most cycles missed',
      "survivor's full cycle / bound",
      'load',
    ],
    [
      [
        `${k.clustersHeld} clusters, shards ${k.shardsHeld.join(',')}`,
        `${ms(k.intoCycleMs)} of ${ms(k.previousCycleMs)}`,
        `${ms(k.leasesExpireMs[0])}–${ms(k.leasesExpireMs[1])}`,
        ms(k.takeoverMs),
        ms(r.leaseMs),
        `${ms(k.maxGapMs)} (${k.maxGapCycles.toFixed(2)} intervals)`,
        `${ms(k.maxGapKilledShardsMs)} / ${ms(k.maxGapSurvivorShardsMs)}`,
        `${k.maxMissed} (${k.overOneMissed} clusters > 1)`,
        k.survivorCycle
          ? `${ms(k.survivorCycle.durationMs)} / ${ms(k.survivorBoundMs)}`
          : 'n/a',
        k.load,
      ],
    ],
  );
  return [
    cycleTable,
    killTable,
    `cycle across ${
      r.replicas
    } replicas within 1.5× of ⌈down/(c × replicas)⌉ × timeout + ⌈N/(c × replicas)⌉ × RTT (${ms(
      r.boundMs,
    )}), judged on the worst of ${r.pairs.length} steady cycles (${r.pairs
      .map(p => `${ms(p.cycleMs)} = ${(p.cycleMs / r.boundMs).toFixed(2)}×`)
      .join(', ')}; median ${ms(r.medianCycleMs)}): ${r.withinBound.toFixed(
      2,
    )}× — ${verdict(r.withinBound <= 1.5)}; each replica probes about 1/${
      r.replicas
    } (±5 % of N): ${splits.join(', ')} — ${verdict(even)}`,
    `after the kill: the survivor held every shard ${ms(
      k.takeoverMs,
    )} after it, lease ${ms(r.leaseMs)} — ${verdict(
      k.takeoverMs <= r.leaseMs,
    )}; no cluster misses more than one cycle: longest gap ${k.maxGapCycles.toFixed(
      2,
    )} intervals, at most ${k.maxMissed} missed, ${
      k.overOneMissed
    } clusters more than one — ${verdict(k.overOneMissed === 0)}`,
  ].join('\n');
}

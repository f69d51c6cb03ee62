import fc from 'fast-check';
import type { ClusterStatus } from '@cnp/plugin-fleet-common';
import type { ProbeOutcome } from '../kubernetes/ClusterClients';
import {
  assertClusterAcceptsDeployments,
  ClusterHealthState,
  decideClusterHealth,
  HealthDecision,
  isMassOutage,
  minOutageSlackMs,
} from './clusterHealthRules';

const ok: ProbeOutcome = {
  kind: 'success',
  latencyMs: 3,
  serverVersion: 'v1.30.0',
};
const fail: ProbeOutcome = {
  kind: 'failure',
  latencyMs: 5,
  message: 'socket hang up',
};
const notProbeable: ProbeOutcome = {
  kind: 'not-probeable',
  message: 'opaque reference',
};
const thresholds = {
  failureThreshold: 2,
  recoveryThreshold: 1,
  minOutageMs: 0,
};
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

/** Applies the outcomes one after the other, probed `everyMs` apart from T0. */
function run(
  start: ClusterHealthState,
  outcomes: ProbeOutcome[],
  t = thresholds,
  everyMs = 60_000,
) {
  let state = start;
  return outcomes.map((outcome, i) => {
    const decision = decideClusterHealth(
      state,
      outcome,
      t,
      new Date(T0 + i * everyMs),
    );
    state = decision;
    return decision;
  });
}

const online: ClusterHealthState = {
  status: 'ONLINE',
  consecutiveFailures: 0,
  consecutiveSuccesses: 3,
};
const unknown: ClusterHealthState = {
  status: 'UNKNOWN',
  consecutiveFailures: 0,
  consecutiveSuccesses: 0,
};

describe('decideClusterHealth', () => {
  it('rule 1 grace period: one failure keeps ONLINE, the threshold makes OFFLINE, a success resets', () => {
    const [first, second] = run(online, [fail, fail]);
    expect(first).toMatchObject({
      status: 'ONLINE',
      consecutiveFailures: 1,
      transition: undefined,
      cascade: 'none',
    });
    expect(first.statusReason).toContain(
      '1/2 consecutive probes failed: socket hang up',
    );
    expect(second).toMatchObject({
      status: 'OFFLINE',
      consecutiveFailures: 2,
      transition: { from: 'ONLINE', to: 'OFFLINE' },
    });

    const [, reset, again] = run(online, [fail, ok, fail]);
    expect(reset).toMatchObject({ status: 'ONLINE', consecutiveFailures: 0 });
    expect(again).toMatchObject({ status: 'ONLINE', consecutiveFailures: 1 });
  });

  it('rule 1 honours a higher threshold and the recovery threshold', () => {
    const decisions = run(online, [fail, fail, fail], {
      failureThreshold: 3,
      recoveryThreshold: 2,
      minOutageMs: 0,
    });
    expect(decisions.map(d => d.status)).toEqual([
      'ONLINE',
      'ONLINE',
      'OFFLINE',
    ]);
    const recovery = run(decisions[2], [ok, ok], {
      failureThreshold: 3,
      recoveryThreshold: 2,
      minOutageMs: 0,
    });
    expect(recovery.map(d => d.status)).toEqual(['OFFLINE', 'ONLINE']);
    expect(recovery[1].cascade).toBe('restore');
  });

  it('rule 2 cascades only on a confirmed ONLINE -> OFFLINE, never from UNKNOWN', () => {
    expect(run(online, [fail, fail])[1].cascade).toBe('degrade');
    const fromUnknown = run(unknown, [fail, fail]);
    expect(fromUnknown[1]).toMatchObject({
      status: 'OFFLINE',
      transition: { from: 'UNKNOWN', to: 'OFFLINE' },
      cascade: 'none',
    });
    // staying OFFLINE does not cascade again
    expect(run(fromUnknown[1], [fail])[0]).toMatchObject({
      status: 'OFFLINE',
      cascade: 'none',
    });
  });

  it('rule 3 restores on becoming ONLINE, from OFFLINE or UNKNOWN, and only then', () => {
    const offline = run(online, [fail, fail])[1];
    expect(run(offline, [ok])[0]).toMatchObject({
      status: 'ONLINE',
      cascade: 'restore',
    });
    expect(run(unknown, [ok])[0]).toMatchObject({
      status: 'ONLINE',
      cascade: 'restore',
    });
    expect(run(online, [ok])[0]).toMatchObject({
      status: 'ONLINE',
      cascade: 'none',
      transition: undefined,
    });
  });

  it('rule 5 not probeable: UNKNOWN, counts neither reset nor advanced, no cascade', () => {
    const halfway = run(online, [fail])[0];
    const [np] = run(halfway, [notProbeable]);
    expect(np).toMatchObject({
      status: 'UNKNOWN',
      consecutiveFailures: 1,
      cascade: 'none',
      transition: { from: 'ONLINE', to: 'UNKNOWN' },
    });
    expect(np.statusReason).toContain('NOT_PROBEABLE');
    const offline = run(online, [fail, fail])[1];
    expect(run(offline, [notProbeable])[0]).toMatchObject({
      status: 'UNKNOWN',
      cascade: 'none',
      consecutiveFailures: 2,
    });
  });

  it('rule 1 recovery threshold holds across an UNKNOWN cycle in the outage or in the recovery', () => {
    const t = { failureThreshold: 2, recoveryThreshold: 3, minOutageMs: 0 };
    const offline = run(
      { status: 'ONLINE', consecutiveFailures: 0, consecutiveSuccesses: 4 },
      [fail, fail],
      t,
    )[1];
    expect(offline).toMatchObject({ status: 'OFFLINE', cascade: 'degrade' });

    // OFFLINE -> UNKNOWN (kubeconfig unreadable a moment) -> answers again.
    const viaUnknown = run(offline, [notProbeable, ok, ok, ok], t);
    expect(viaUnknown.map(d => d.status)).toEqual([
      'UNKNOWN',
      'UNKNOWN',
      'UNKNOWN',
      'ONLINE',
    ]);
    expect(viaUnknown.map(d => d.cascade)).toEqual([
      'none',
      'none',
      'none',
      'restore',
    ]);
    expect(viaUnknown[1].statusReason).toBe(
      'RECOVERING: 1/3 consecutive successful probes',
    );

    // Recovering (1 success), UNKNOWN, then the remaining successes.
    const midRecovery = run(offline, [ok, notProbeable, ok, ok], t);
    expect(midRecovery.map(d => d.status)).toEqual([
      'OFFLINE',
      'UNKNOWN',
      'UNKNOWN',
      'ONLINE',
    ]);
    expect(midRecovery[3]).toMatchObject({
      cascade: 'restore',
      consecutiveFailures: 0,
      consecutiveSuccesses: 3,
    });

    // A cluster that was ONLINE before going UNKNOWN needs no recovery: one success.
    const wasOnline = run(
      { status: 'ONLINE', consecutiveFailures: 1, consecutiveSuccesses: 0 },
      [notProbeable, ok],
      t,
    );
    expect(wasOnline.map(d => d.status)).toEqual(['UNKNOWN', 'ONLINE']);
  });

  it('never degrades except on ONLINE -> OFFLINE, and never goes OFFLINE below the threshold or before minOutage (property)', () => {
    const outcome = fc.constantFrom<ProbeOutcome>(ok, fail, notProbeable);
    fc.assert(
      fc.property(
        fc.constantFrom<ClusterStatus>('ONLINE', 'OFFLINE', 'UNKNOWN'),
        fc.array(fc.tuple(outcome, fc.integer({ min: 0, max: 120_000 })), {
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 300_000 }),
        (status, probes, failureThreshold, recoveryThreshold, minOutageMs) => {
          const steps: Array<{
            before: ClusterHealthState;
            outcome: ProbeOutcome;
            decision: HealthDecision;
            at: number;
          }> = [];
          let state: ClusterHealthState = {
            status,
            consecutiveFailures: 0,
            consecutiveSuccesses: 0,
          };
          let at = T0;
          for (const [o, gapMs] of probes) {
            at += gapMs;
            const decision = decideClusterHealth(
              state,
              o,
              { failureThreshold, recoveryThreshold, minOutageMs },
              new Date(at),
            );
            steps.push({ before: state, outcome: o, decision, at });
            state = decision;
          }
          for (const { decision } of steps.filter(
            s => s.decision.cascade === 'degrade',
          )) {
            expect(decision.transition).toEqual({
              from: 'ONLINE',
              to: 'OFFLINE',
            });
          }
          for (const { decision, at: when } of steps.filter(
            s => s.decision.transition?.to === 'OFFLINE',
          )) {
            expect(decision.consecutiveFailures).toBeGreaterThanOrEqual(
              failureThreshold,
            );
            expect(
              when - Date.parse(decision.firstFailureAt!),
            ).toBeGreaterThanOrEqual(
              minOutageMs - minOutageSlackMs(minOutageMs),
            );
          }
          for (const { before, decision } of steps.filter(
            s => s.outcome.kind === 'not-probeable',
          )) {
            expect([
              decision.consecutiveFailures,
              decision.consecutiveSuccesses,
              decision.firstFailureAt,
            ]).toEqual([
              before.consecutiveFailures,
              before.consecutiveSuccesses,
              before.firstFailureAt,
            ]);
          }
        },
      ),
    );
  });

  it('rule 1 time: a blip shorter than minOutage stays ONLINE with the threshold reached, the same outage lasting minOutage goes OFFLINE', () => {
    const t = {
      failureThreshold: 2,
      recoveryThreshold: 1,
      minOutageMs: 300_000,
    };
    // A 10-second blip seen by the scheduled cycle and one manual run: 2/2 failures.
    const blip = run(online, [fail, fail], t, 10_000);
    expect(blip[1]).toMatchObject({
      status: 'ONLINE',
      consecutiveFailures: 2,
      firstFailureAt: new Date(T0).toISOString(),
      transition: undefined,
      cascade: 'none',
    });
    expect(blip[1].statusReason).toBe(
      'PROBE_FAILED: 2/2 consecutive probes failed over 10 s (an outage is confirmed after 300 s): socket hang up',
    );
    // Over: a success forgets the first failure.
    const [over] = run(blip[1], [ok], t);
    expect(over).toMatchObject({ status: 'ONLINE', consecutiveFailures: 0 });
    expect(over.firstFailureAt).toBeUndefined();

    // The same count over minOutage confirms it, timed from the first failure.
    const outage = run(online, [fail, fail, fail], t, 150_000);
    expect(outage.map(d => d.status)).toEqual(['ONLINE', 'ONLINE', 'OFFLINE']);
    expect(outage[2]).toMatchObject({
      consecutiveFailures: 3,
      firstFailureAt: new Date(T0).toISOString(),
      transition: { from: 'ONLINE', to: 'OFFLINE' },
      cascade: 'degrade',
    });
    expect(outage[2].statusReason).toMatch(
      /^FAILURE_THRESHOLD_REACHED: 3\/2 consecutive probes failed over 300 s/,
    );

    // Two scheduled cycles one interval apart may start a few seconds less apart.
    expect(run(online, [fail, fail], t, 295_000)[1]).toMatchObject({
      status: 'OFFLINE',
    });
    expect(run(online, [fail, fail], t, 289_000)[1]).toMatchObject({
      status: 'ONLINE',
    });

    // A failure count stored without its first failure's time starts the clock at the next one.
    const [legacy] = run(
      { status: 'ONLINE', consecutiveFailures: 1, consecutiveSuccesses: 0 },
      [fail],
      t,
    );
    expect(legacy).toMatchObject({
      status: 'ONLINE',
      consecutiveFailures: 2,
      firstFailureAt: new Date(T0).toISOString(),
    });
  });
});

describe('isMassOutage', () => {
  const policy = { minClusters: 3, fraction: 0.55 };
  it('needs both the minimum count and the fraction of probeable clusters', () => {
    expect(isMassOutage(3, 4, policy)).toBe(true);
    expect(isMassOutage(2, 2, policy)).toBe(false);
    expect(isMassOutage(3, 10, policy)).toBe(false);
    expect(isMassOutage(6, 10, policy)).toBe(true);
    expect(isMassOutage(0, 0, policy)).toBe(false);
  });
});

describe('assertClusterAcceptsDeployments', () => {
  it('refuses OFFLINE with a ConflictError and allows ONLINE and UNKNOWN', () => {
    expect(() =>
      assertClusterAcceptsDeployments({ name: 'c', status: 'OFFLINE' }),
    ).toThrow(expect.objectContaining({ name: 'ConflictError' }));
    expect(() =>
      assertClusterAcceptsDeployments({ name: 'c', status: 'ONLINE' }),
    ).not.toThrow();
    expect(() =>
      assertClusterAcceptsDeployments({ name: 'c', status: 'UNKNOWN' }),
    ).not.toThrow();
  });
});

import fc from 'fast-check';
import type { ClusterStatus } from '@cnp/plugin-fleet-common';
import type { ProbeOutcome } from '../kubernetes/ClusterClients';
import {
  assertClusterAcceptsDeployments,
  ClusterHealthState,
  decideClusterHealth,
  HealthDecision,
  isMassOutage,
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
const thresholds = { failureThreshold: 2, recoveryThreshold: 1 };

function run(
  start: ClusterHealthState,
  outcomes: ProbeOutcome[],
  t = thresholds,
) {
  let state = start;
  return outcomes.map(outcome => {
    const decision = decideClusterHealth(state, outcome, t);
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
    });
    expect(decisions.map(d => d.status)).toEqual([
      'ONLINE',
      'ONLINE',
      'OFFLINE',
    ]);
    const recovery = run(decisions[2], [ok, ok], {
      failureThreshold: 3,
      recoveryThreshold: 2,
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
    const t = { failureThreshold: 2, recoveryThreshold: 3 };
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

  it('never degrades except on ONLINE -> OFFLINE, and never goes OFFLINE below the threshold (property)', () => {
    const outcome = fc.constantFrom<ProbeOutcome>(ok, fail, notProbeable);
    fc.assert(
      fc.property(
        fc.constantFrom<ClusterStatus>('ONLINE', 'OFFLINE', 'UNKNOWN'),
        fc.array(outcome, { maxLength: 30 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 3 }),
        (status, outcomes, failureThreshold, recoveryThreshold) => {
          const steps: Array<{
            before: ClusterHealthState;
            outcome: ProbeOutcome;
            decision: HealthDecision;
          }> = [];
          let state: ClusterHealthState = {
            status,
            consecutiveFailures: 0,
            consecutiveSuccesses: 0,
          };
          for (const o of outcomes) {
            const decision = decideClusterHealth(state, o, {
              failureThreshold,
              recoveryThreshold,
            });
            steps.push({ before: state, outcome: o, decision });
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
          for (const { decision } of steps.filter(
            s => s.decision.transition?.to === 'OFFLINE',
          )) {
            expect(decision.consecutiveFailures).toBeGreaterThanOrEqual(
              failureThreshold,
            );
          }
          for (const { before, decision } of steps.filter(
            s => s.outcome.kind === 'not-probeable',
          )) {
            expect([
              decision.consecutiveFailures,
              decision.consecutiveSuccesses,
            ]).toEqual([
              before.consecutiveFailures,
              before.consecutiveSuccesses,
            ]);
          }
        },
      ),
    );
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

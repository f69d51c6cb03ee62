import type { ReleaseGate } from '@cnp/plugin-fleet-common';
import {
  approvalsMissing,
  authorOf,
  checkApproval,
  decided,
  gatePhase,
  newGate,
  refusal,
  requiredApprovals,
  windowOf,
} from './gates';

const now = new Date('2026-12-04T17:00:00Z');
const managers = 'group:default/release-managers';
const friday = {
  name: 'friday',
  clusters: ['prd-a'],
  closesAt: new Date('2026-12-07T09:00:00Z'),
};

function approvedBy(gate: ReleaseGate, ...actors: string[]): ReleaseGate {
  return actors.reduce(
    (g, actor) =>
      decided(
        g,
        { actor, decision: 'APPROVED', comment: null, overrideFreeze: false },
        now,
      ),
    gate,
  );
}

describe('release gates', () => {
  it('reads the author of a release made on their behalf', () => {
    expect(authorOf('user:default/Jane via plugin:scaffolder')).toBe(
      'user:default/jane',
    );
    expect(authorOf('user:default/jane')).toBe('user:default/jane');
  });

  it('takes the approvals a stage requires, one by default', () => {
    expect(requiredApprovals(undefined)).toBeNull();
    expect(requiredApprovals({ name: 'prod', clusters: ['a'] })).toBeNull();
    expect(
      requiredApprovals({
        name: 'prod',
        clusters: ['a'],
        requires: {
          stage: 'staging',
          approvals: { groups: ['group:default/Release-Managers'] },
        },
      }),
    ).toEqual({ groups: [managers], count: 1 });
  });

  it('counts one approval per person, whatever their case', () => {
    const gate = newGate({ groups: [managers], count: 2 }, []);
    expect(approvalsMissing(gate)).toBe(2);
    expect(
      approvalsMissing(
        approvedBy(gate, 'user:default/carol', 'user:default/Carol'),
      ),
    ).toBe(1);
    expect(
      approvalsMissing(
        approvedBy(gate, 'user:default/carol', 'user:default/dave'),
      ),
    ).toBe(0);
  });

  it('waits for approvals, then for an open window unless an approval overrode it', () => {
    const gate = newGate({ groups: [managers], count: 1 }, [friday]);
    expect(gate.window).toEqual({
      name: 'friday',
      clusters: ['prd-a'],
      closesAt: '2026-12-07T09:00:00.000Z',
    });
    expect(gatePhase(gate, [friday])).toBe('WAITING_FOR_APPROVAL');
    const approved = approvedBy(gate, 'user:default/carol');
    expect(gatePhase(approved, [friday])).toBe('WAITING_FOR_WINDOW');
    expect(gatePhase(approved, [])).toBe('OPEN');
    const overridden = decided(
      gate,
      {
        actor: 'user:default/carol',
        decision: 'APPROVED',
        comment: 'hotfix',
        overrideFreeze: true,
      },
      now,
    );
    expect(gatePhase(overridden, [friday])).toBe('OPEN');
  });

  it('waits for the window that closes last, naming every frozen cluster', () => {
    expect(windowOf([])).toBeNull();
    expect(
      windowOf([
        friday,
        {
          name: 'year-end',
          clusters: ['prd-b', 'prd-a'],
          closesAt: new Date('2027-01-02T00:00:00Z'),
        },
      ]),
    ).toEqual({
      name: 'year-end',
      clusters: ['prd-a', 'prd-b'],
      closesAt: '2027-01-02T00:00:00.000Z',
    });
  });

  it('never lets the author approve, lets them withdraw, and keeps decisions to the groups', () => {
    const gate = newGate({ groups: [managers], count: 1 }, []);
    const base = {
      releaseId: 'r1',
      createdBy: 'user:default/jane via plugin:scaffolder',
      gate,
    };
    const jane = { ref: 'user:default/jane', groups: [managers] };
    const carol = { ref: 'user:default/carol', groups: [managers] };
    const bob = { ref: 'user:default/bob', groups: ['group:default/team-a'] };
    expect(refusal({ ...base, action: 'approve', decider: jane })).toBe(
      "You started release 'r1': someone else must approve it",
    );
    expect(
      refusal({ ...base, action: 'reject', decider: jane }),
    ).toBeUndefined();
    expect(
      refusal({ ...base, action: 'approve', decider: carol }),
    ).toBeUndefined();
    expect(refusal({ ...base, action: 'approve', decider: bob })).toBe(
      `Only members of ${managers} may approve release 'r1'`,
    );
    // Without groups (a release held by a freeze window only), anyone but the author.
    const window = newGate(null, [friday]);
    expect(
      refusal({ ...base, gate: window, action: 'approve', decider: bob }),
    ).toBeUndefined();
  });

  it('takes approver groups as the catalog writes them, whatever way the spec gives them', () => {
    expect(
      requiredApprovals({
        name: 'prod',
        clusters: ['a'],
        requires: {
          stage: 'staging',
          approvals: {
            groups: ['release-managers', ' group:SRE ', 'group:ops/Oncall'],
            count: 2,
          },
        },
      }),
    ).toEqual({
      groups: [managers, 'group:default/sre', 'group:ops/oncall'],
      count: 2,
    });
  });

  it('lets only people approve: a service or a static token is nobody to count on', () => {
    const base = { releaseId: 'r1', createdBy: 'user:default/jane' };
    const ci = { ref: 'external:ci-bot', groups: [] };
    const scaffolder = { ref: 'plugin:scaffolder', groups: [managers] };
    for (const gate of [
      newGate(null, [friday]),
      newGate({ groups: [managers], count: 1 }, []),
    ]) {
      expect(refusal({ ...base, gate, action: 'approve', decider: ci })).toBe(
        "Only a signed-in user may approve release 'r1'",
      );
      expect(
        refusal({ ...base, gate, action: 'approve', decider: scaffolder }),
      ).toBe("Only a signed-in user may approve release 'r1'");
    }
    // A release a pipeline started is its own to withdraw.
    expect(
      refusal({
        releaseId: 'r1',
        createdBy: 'external:ci-bot',
        gate: newGate(null, [friday]),
        action: 'reject',
        decider: ci,
      }),
    ).toBeUndefined();
  });

  it('refuses a second approval by the same person and an approval a window makes useless', () => {
    const gate = approvedBy(
      newGate({ groups: [managers], count: 2 }, []),
      'user:default/carol',
    );
    const record = {
      id: 'r1',
      createdBy: 'user:default/jane',
      phase: 'WAITING_FOR_APPROVAL',
      gate,
    };
    const carol = { ref: 'user:default/carol', groups: [managers] };
    expect(() => checkApproval(record, carol, false)).toThrow(
      "You approved release 'r1' already: it waits for 1 more approval from group:default/release-managers",
    );
    const held = {
      ...record,
      phase: 'WAITING_FOR_WINDOW',
      gate: { ...approvedBy(newGate(null, [friday]), 'user:default/dave') },
    };
    expect(() => checkApproval(held, carol, false)).toThrow(
      /waits for freeze window 'friday' on prd-a \(closes at 2026-12-07T09:00:00.000Z\): approve it with overrideFreeze/,
    );
    expect(() => checkApproval(held, carol, true)).not.toThrow();
  });
});

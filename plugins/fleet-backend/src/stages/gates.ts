import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import { ConflictError, NotAllowedError } from '@backstage/errors';
import type { ReleaseDecision, ReleaseGate } from '@cnp/plugin-fleet-common';
import type { ReleaseRecord } from '../database/types';
import type { ClusterLabels, FrozenBy } from './freezeWindows';
import type { Stage } from './stageRules';

/*
 * The pure rules of a release's gate: what a release to a stage waits for before it starts (the
 * approvals its stage requires, a freeze window open on one of its clusters), who may decide on
 * it, and what each decision does. Nothing here reads a store or a clock.
 */

/** The phases of a release waiting before it starts. */
export const WAITING_PHASES = [
  'WAITING_FOR_APPROVAL',
  'WAITING_FOR_WINDOW',
] as const;

export type WaitingPhase = (typeof WAITING_PHASES)[number];

export function isWaiting(phase: string | undefined): phase is WaitingPhase {
  return WAITING_PHASES.includes(phase as WaitingPhase);
}

/** The freeze windows, as the gate asks them: which of these clusters are frozen now. */
export interface FreezeWindowLookup {
  /** The windows open at `now` freezing one of `clusters`, the one that closes last first. */
  frozen(clusters: ClusterLabels[], now?: Date): FrozenBy[];
}

/** Someone deciding on a release: their user entity ref and the groups they belong to. */
export interface Decider {
  ref: string;
  groups: string[];
}

/** The user a release's `createdBy` names (`user:default/jane via scaffolder` is jane). */
export function authorOf(createdBy: string): string {
  return createdBy.split(' via ')[0].trim().toLocaleLowerCase('en-US');
}

const lower = (ref: string) => ref.toLocaleLowerCase('en-US');

/**
 * A group as the catalog's relations name it (`group:default/sre`), however the spec wrote it
 * (`sre`, `group:SRE`): a spelling that never matched a relation would leave a release nobody
 * may approve.
 */
function groupRef(ref: string): string {
  try {
    return lower(
      stringifyEntityRef(
        parseEntityRef(ref.trim(), {
          defaultKind: 'group',
          defaultNamespace: 'default',
        }),
      ),
    );
  } catch {
    return lower(ref.trim());
  }
}

/** The approvals a stage requires, as a gate records them; null when it requires none. */
export function requiredApprovals(
  stage: Stage | undefined,
): ReleaseGate['approvals'] {
  const approvals = stage?.requires?.approvals;
  if (!approvals) return null;
  return {
    groups: approvals.groups.map(groupRef),
    count: approvals.count ?? 1,
  };
}

/** The distinct people who approved, in the order they did. */
export function approvers(gate: ReleaseGate): string[] {
  return [
    ...new Set(
      gate.decisions
        .filter(d => d.decision === 'APPROVED')
        .map(d => lower(d.actor)),
    ),
  ];
}

/** How many approvals the gate still lacks (0 when it requires none). */
export function approvalsMissing(gate: ReleaseGate): number {
  if (!gate.approvals) return 0;
  return Math.max(0, gate.approvals.count - approvers(gate).length);
}

/** Whether an approval on the gate said to start inside an open freeze window. */
export function freezeOverridden(gate: ReleaseGate): boolean {
  return gate.decisions.some(
    d => d.decision === 'APPROVED' && d.overrideFreeze,
  );
}

/** The window a gate waits for: the open one that closes last, with every frozen cluster. */
export function windowOf(frozen: FrozenBy[]): ReleaseGate['window'] {
  if (frozen.length === 0) return null;
  const last = frozen.reduce((a, b) =>
    b.closesAt.getTime() > a.closesAt.getTime() ? b : a,
  );
  return {
    name: last.name,
    clusters: [...new Set(frozen.flatMap(f => f.clusters))].sort(),
    closesAt: last.closesAt.toISOString(),
  };
}

/** What a gate makes of a release now: it waits for approvals, for a window, or it may start. */
export function gatePhase(
  gate: ReleaseGate,
  frozen: FrozenBy[],
): WaitingPhase | 'OPEN' {
  if (approvalsMissing(gate) > 0) return 'WAITING_FOR_APPROVAL';
  if (frozen.length > 0 && !freezeOverridden(gate)) return 'WAITING_FOR_WINDOW';
  return 'OPEN';
}

/** A release's gate as it is created: what it requires, nothing decided. */
export function newGate(
  approvals: ReleaseGate['approvals'],
  frozen: FrozenBy[],
): ReleaseGate {
  return {
    approvals,
    decisions: [],
    window: windowOf(frozen),
    openedAt: null,
    openedBy: null,
  };
}

/** Why `decider` may not approve (or reject) the release; undefined when they may. */
export function refusal(options: {
  action: 'approve' | 'reject';
  releaseId: string;
  createdBy: string;
  gate: ReleaseGate;
  decider: Decider;
}): string | undefined {
  const { action, releaseId, createdBy, gate, decider } = options;
  const isAuthor = authorOf(createdBy) === authorOf(decider.ref);
  // An approval is a person's word: a service principal (a plugin, a static token anyone with it
  // may use, the author included) approves nothing, and so overrides no freeze window.
  if (action === 'approve' && !lower(decider.ref).startsWith('user:')) {
    return `Only a signed-in user may approve release '${releaseId}'`;
  }
  // The author may withdraw their own release, never approve it.
  if (isAuthor) {
    return action === 'approve'
      ? `You started release '${releaseId}': someone else must approve it`
      : undefined;
  }
  const groups = gate.approvals?.groups;
  if (groups && !groups.some(g => decider.groups.map(lower).includes(g))) {
    return `Only members of ${groups.join(
      ', ',
    )} may ${action} release '${releaseId}'`;
  }
  return undefined;
}

/** The decision recorded on a gate. */
export function decided(
  gate: ReleaseGate,
  decision: Omit<ReleaseDecision, 'at'>,
  now: Date,
): ReleaseGate {
  return {
    ...gate,
    decisions: [...gate.decisions, { ...decision, at: now.toISOString() }],
  };
}

/** The gate once it opened: when and by whom. */
export function opened(gate: ReleaseGate, by: string, now: Date): ReleaseGate {
  return { ...gate, openedAt: now.toISOString(), openedBy: by };
}

/** What a waiting release waits for, in words: for its events and its 409s. */
export function waitingFor(gate: ReleaseGate, phase: WaitingPhase): string {
  if (phase === 'WAITING_FOR_APPROVAL') {
    const missing = approvalsMissing(gate);
    return `${missing} more approval${missing === 1 ? '' : 's'} from ${
      gate.approvals?.groups.join(', ') ?? 'an approver'
    }`;
  }
  const window = gate.window;
  return window
    ? `freeze window '${window.name}' on ${window.clusters.join(', ')}${
        window.closesAt ? ` (closes at ${window.closesAt})` : ''
      }`
    : 'a freeze window';
}

/** Who hears that a release waits for them, and that their release was decided on. */
export interface ReleaseGateNotices {
  /** A release waits for approvals from `groups`. */
  approvalWanted(notice: {
    releaseId: string;
    entityRef: string;
    stage?: string;
    author: string;
    groups: string[];
    what: string;
  }): Promise<void>;
  /** Someone approved or rejected a release: its author hears of it. */
  decided(notice: {
    releaseId: string;
    entityRef: string;
    author: string;
    decider: string;
    decision: 'APPROVED' | 'REJECTED';
    comment: string | null;
    started: boolean;
  }): Promise<void>;
}

/** Refuses an approval its decider may not give, or that would give the release nothing. */
export function checkApproval(
  record: Pick<ReleaseRecord, 'id' | 'gate' | 'phase' | 'createdBy'>,
  decider: Decider,
  override: boolean,
) {
  const { id } = record;
  const gate = record.gate!;
  const phase = record.phase as WaitingPhase;
  const why = refusal({
    action: 'approve',
    releaseId: id,
    createdBy: record.createdBy,
    gate,
    decider,
  });
  if (why) throw new NotAllowedError(why);
  if (
    phase === 'WAITING_FOR_APPROVAL' &&
    approvers(gate).includes(decider.ref.toLocaleLowerCase('en-US')) &&
    !override
  ) {
    throw new ConflictError(
      `You approved release '${id}' already: it waits for ${waitingFor(
        gate,
        phase,
      )}`,
    );
  }
  if (phase === 'WAITING_FOR_WINDOW' && !override) {
    throw new ConflictError(
      `Release '${id}' has its approvals and waits for ${waitingFor(
        gate,
        phase,
      )}: approve it with overrideFreeze to start it now`,
    );
  }
}

/**
 * Why `decider` may not change the stages of an application whose stages require approvals;
 * undefined when they may, or when the stages do not change. The approvals hold a version back
 * from prod until someone other than its author agreed: an owner who could drop them before
 * releasing would hold them back from nobody, so only a member of the approver groups the
 * stages name now may change them.
 */
export function stageChangeRefusal(options: {
  entityRef: string;
  current: readonly Stage[] | undefined;
  next: readonly Stage[] | undefined;
  decider: Decider;
}): string | undefined {
  const { entityRef, current, next, decider } = options;
  if (next === undefined) return undefined;
  if (JSON.stringify(current ?? []) === JSON.stringify(next)) return undefined;
  const groups = [
    ...new Set(
      (current ?? []).flatMap(s => requiredApprovals(s)?.groups ?? []),
    ),
  ];
  if (groups.length === 0) return undefined;
  const mine = decider.groups.map(g => g.toLocaleLowerCase('en-US'));
  if (groups.some(g => mine.includes(g))) return undefined;
  return `Only members of ${groups.join(
    ', ',
  )} may change the stages of ${entityRef}: they hold its approvals`;
}

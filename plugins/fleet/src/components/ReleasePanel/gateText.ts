import type { Release, ReleaseGate } from '@cnp/plugin-fleet-common';
import { formatExact as timeText } from '../RelativeTime/RelativeTime';
import { humanizedRef } from '../EntityName';

/** Statuses of a release that waits before it starts. */
export const WAITING_STATUSES: ReadonlyArray<Release['status']> = [
  'WAITING_FOR_APPROVAL',
  'WAITING_FOR_WINDOW',
];

/**
 * What a waiting release waits for, in words: "Waiting for approval", "Waiting for freeze window
 * <name> until <time>" (or "to close" when its end is not known), "Rejected"; the status itself
 * for any other.
 */
export function gateStatusText(
  release: Pick<Release, 'status' | 'gate'>,
): string {
  switch (release.status) {
    case 'WAITING_FOR_APPROVAL':
      return 'Waiting for approval';
    case 'WAITING_FOR_WINDOW': {
      const window = release.gate?.window;
      if (!window) return 'Waiting for a freeze window';
      return window.closesAt
        ? `Waiting for freeze window ${window.name} until ${timeText(
            window.closesAt,
          )}`
        : `Waiting for freeze window ${window.name} to close`;
    }
    case 'REJECTED':
      return 'Rejected';
    default:
      return release.status;
  }
}

/** How many approvals the gate has so far (one per person). */
export function approvalsGiven(gate: ReleaseGate): number {
  return new Set(
    gate.decisions.filter(d => d.decision === 'APPROVED').map(d => d.actor),
  ).size;
}

/**
 * Who must approve: "1 approval from release-managers (0 given)", groups by name, joined
 * with "or"; undefined when the gate requires no approval.
 */
export function approvalsText(
  gate: ReleaseGate | null | undefined,
): string | undefined {
  if (!gate?.approvals) return undefined;
  const { count, groups } = gate.approvals;
  return `${count} approval${count === 1 ? '' : 's'} from ${groups
    .map(g => humanizedRef(g, 'group'))
    .join(' or ')} (${approvalsGiven(gate)} given)`;
}

/**
 * What approving does, in words: it counts towards the approvals a release waiting for them
 * requires; it starts a release a freeze window holds inside the window, now.
 */
export function approvalText(release: Release): string {
  const approvals = release.gate?.approvals;
  if (release.status === 'WAITING_FOR_APPROVAL' && approvals) {
    const { count } = approvals;
    return `Your approval counts towards the ${count} approval${
      count === 1 ? '' : 's'
    } the stage requires; the release starts once it has them all.`;
  }
  if (release.status === 'WAITING_FOR_WINDOW') {
    const name = release.gate?.window?.name;
    return `Approving overrides ${
      name ? `freeze window ${name}` : 'the freeze window'
    }: the release starts inside the window now.`;
  }
  return 'Approving lets the release start.';
}

/**
 * The freeze window a release waits for, in words: "freeze window <name> on <clusters>, closes
 * <time>"; undefined when there is none.
 */
export function windowText(
  gate: ReleaseGate | null | undefined,
): string | undefined {
  const window = gate?.window;
  if (!window) return undefined;
  const on = window.clusters.length ? ` on ${window.clusters.join(', ')}` : '';
  const closes = window.closesAt ? `, closes ${timeText(window.closesAt)}` : '';
  return `freeze window ${window.name}${on}${closes}`;
}

/** The signed-in user started the release: `createdBy` is their ref, perhaps " via <service>". */
export function isAuthor(createdBy: string, userEntityRef?: string): boolean {
  if (!userEntityRef) return false;
  const author = createdBy.split(' via ')[0].trim();
  return (
    author.toLocaleLowerCase('en-US') ===
    userEntityRef.toLocaleLowerCase('en-US')
  );
}

/**
 * Why the user may not decide on a release whose gate names approver groups: they claim none of
 * them ("Only members of <groups> may approve this release"); undefined when they claim one, when
 * the gate names none, or when their claims are not known. The claims are the token's, the
 * backend reads the catalog and decides: this only spares a non-member the 403.
 */
export function notApproverText(
  gate: ReleaseGate | null | undefined,
  ownershipEntityRefs: string[] | undefined,
): string | undefined {
  const groups = gate?.approvals?.groups ?? [];
  if (groups.length === 0 || !ownershipEntityRefs) return undefined;
  const lower = (ref: string) => ref.toLocaleLowerCase('en-US');
  const claims = new Set(ownershipEntityRefs.map(lower));
  if (groups.some(g => claims.has(lower(g)))) return undefined;
  return `Only members of ${groups
    .map(g => humanizedRef(g, 'group'))
    .join(' or ')} may approve this release`;
}

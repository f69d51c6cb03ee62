import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import type { Application, ReleaseGate } from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import type {
  ApplicationStore,
  ClusterRecord,
  ClusterStore,
  NewEvent,
  ReleaseRecord,
  ReleaseStore,
} from '../database/types';
import {
  authorOf,
  checkApproval,
  decided,
  gatePhase,
  isWaiting,
  newGate,
  opened,
  refusal,
  requiredApprovals,
  waitingFor,
  windowOf,
  type Decider,
  type FreezeWindowLookup,
  type ReleaseGateNotices,
  type WaitingPhase,
} from '../stages/gates';
import { asError } from '../util/errors';
import { releasedWhat } from './releasedWhat';
import { recordedRequest, type OpenedRelease } from './releaseStart';
import type { ReleaseRequest } from './ReleaseService';

export interface ReleaseGatesOptions {
  stores: {
    applications: Pick<ApplicationStore, 'getApplication'>;
    clusters: Pick<ClusterStore, 'getCluster'>;
    releases: ReleaseStore;
  };
  /** The freeze windows (none: nothing is ever frozen). */
  windows?: FreezeWindowLookup;
  notices?: ReleaseGateNotices;
  clock: () => Date;
  logger?: LoggerService;
  /** Starts a release whose gate opened, in place of its waiting record. */
  start(
    application: Application,
    clusters: ClusterRecord[],
    request: ReleaseRequest,
    actor: string,
    waited: OpenedRelease,
  ): Promise<string>;
}

/** A decision's words: its optional comment. */
export interface DecisionInput {
  comment?: string;
  overrideFreeze?: boolean;
}

const event = (
  record: Pick<ReleaseRecord, 'id'>,
  e: Omit<NewEvent, 'subjectKind' | 'subject'>,
): NewEvent => ({ subjectKind: 'release', subject: record.id, ...e });

const quoted = (comment: string | null | undefined) =>
  comment ? `: "${comment}"` : '';

/**
 * The gates releases wait at before they start: a release to a stage that requires approvals
 * waits for them (WAITING_FOR_APPROVAL), one touching a cluster in an open freeze window waits
 * for the window to close (WAITING_FOR_WINDOW), unless an approval overrides it. Approvals come
 * from members of the stage's groups, never from the release's author, one per person; a
 * rejection ends the release REJECTED with nothing applied. Every decision is an event of the
 * release, with who and their comment.
 */
export class ReleaseGates {
  private constructor(private readonly options: ReleaseGatesOptions) {}

  static create(options: ReleaseGatesOptions): ReleaseGates {
    return new ReleaseGates(options);
  }

  /**
   * Stores the release as waiting when its stage requires approvals or a freeze window is open
   * on one of its clusters, and answers it; undefined when nothing holds it back.
   */
  async hold(
    application: Application,
    clusters: ClusterRecord[],
    request: ReleaseRequest,
    actor: string,
  ): Promise<ReleaseRecord | undefined> {
    const { stores, windows, clock } = this.options;
    const stage = application.spec.stages?.find(s => s.name === request.stage);
    const approvals = requiredApprovals(stage);
    const frozen = windows?.frozen(labelled(clusters), clock()) ?? [];
    if (!approvals && frozen.length === 0) return undefined;
    const gate = newGate(approvals, frozen);
    const phase = gatePhase(gate, frozen) as WaitingPhase;
    const id = randomUUID();
    const what = `${releasedWhat(request)}${
      request.stage ? ` to stage ${request.stage}` : ''
    }`;
    // Stored with its first event in one write: the gates' task may open it at once.
    const record = await stores.releases.insertRelease(
      {
        id,
        applicationId: application.id,
        createdBy: actor,
        request: recordedRequest(
          request,
          clusters.map(c => c.name),
        ),
        strategy: request.strategy,
        stage: request.stage,
        phase,
        gate,
        targets: [],
        skipped: [],
      },
      [
        event(
          { id },
          {
            actor,
            to: phase,
            reason: phase,
            message: `Release of ${what} by ${actor} waits for ${waitingFor(
              gate,
              phase,
            )}`,
          },
        ),
      ],
    );
    if (phase === 'WAITING_FOR_APPROVAL' && approvals) {
      await this.notify(n =>
        n.approvalWanted({
          releaseId: record.id,
          entityRef: application.entityRef,
          stage: request.stage,
          author: actor,
          groups: approvals.groups,
          what,
        }),
      );
    }
    return record;
  }

  /**
   * Approves a waiting release. It starts once it has its approvals, unless a freeze window
   * holds it and no approval overrode the window. 403 for its author and for non-members of its
   * stage's groups; 409 when it waits for nothing this approval gives.
   */
  async approve(
    id: string,
    decider: Decider,
    input: DecisionInput,
  ): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const record = await this.waiting(id, 'approve');
      const gate = record.gate!;
      const phase = record.phase as WaitingPhase;
      const override = input.overrideFreeze === true;
      checkApproval(record, decider, override);
      const now = this.options.clock();
      const clusters = await this.clustersOf(record);
      const frozen =
        this.options.windows?.frozen(labelled(clusters), now) ?? [];
      const next = {
        ...decided(
          gate,
          {
            actor: decider.ref,
            decision: 'APPROVED',
            comment: input.comment ?? null,
            // An override is of the window open now: given while none is, it would let a
            // window that opens later go unheeded, and no event would say who overrode it.
            overrideFreeze: override && frozen.length > 0,
          },
          now,
        ),
        window: windowOf(frozen) ?? gate.window,
      };
      const events = [
        event(record, {
          actor: decider.ref,
          from: phase,
          to: phase,
          reason: 'APPROVED',
          message: `Approved by ${decider.ref}${quoted(input.comment)}`,
        }),
      ];
      if (override && frozen.length > 0) {
        events.push(
          event(record, {
            actor: decider.ref,
            from: phase,
            to: phase,
            reason: 'FREEZE_OVERRIDDEN',
            message: `${decider.ref} overrode freeze window '${
              next.window!.name
            }' on ${next.window!.clusters.join(', ')}`,
          }),
        );
      }
      const after = gatePhase(next, frozen);
      if (after === 'OPEN') {
        await this.open(record, next, decider.ref, events, now);
        await this.noticeDecision(record, decider.ref, 'APPROVED', input, true);
        return;
      }
      if (after !== phase) {
        events.push(
          event(record, {
            actor: decider.ref,
            from: phase,
            to: after,
            reason: after,
            message: `Approved; waits for ${waitingFor(next, after)}`,
          }),
        );
      }
      if (
        await this.options.stores.releases.updateRelease(
          id,
          record.version,
          { phase: after, gate: next },
          events,
        )
      ) {
        await this.noticeDecision(
          record,
          decider.ref,
          'APPROVED',
          input,
          false,
        );
        return;
      }
    }
    throw changing(id);
  }

  /**
   * Rejects a waiting release: it ends REJECTED and nothing is applied. By a member of its
   * stage's groups, or by its author (withdrawing it).
   */
  async reject(
    id: string,
    decider: Decider,
    input: DecisionInput,
  ): Promise<void> {
    if (input.overrideFreeze !== undefined) {
      throw new InputError(
        'Invalid rejection: overrideFreeze belongs to an approval',
      );
    }
    for (let attempt = 0; attempt < 5; attempt++) {
      const record = await this.waiting(id, 'reject');
      const gate = record.gate!;
      const why = refusal({
        action: 'reject',
        releaseId: id,
        createdBy: record.createdBy,
        gate,
        decider,
      });
      if (why) throw new NotAllowedError(why);
      const now = this.options.clock();
      const next = decided(
        gate,
        {
          actor: decider.ref,
          decision: 'REJECTED',
          comment: input.comment ?? null,
          overrideFreeze: false,
        },
        now,
      );
      const written = await this.options.stores.releases.updateRelease(
        id,
        record.version,
        { phase: 'REJECTED', gate: next },
        [
          event(record, {
            actor: decider.ref,
            from: record.phase,
            to: 'REJECTED',
            reason: 'REJECTED',
            message: `Rejected by ${decider.ref}${quoted(
              input.comment,
            )}; nothing was applied`,
          }),
        ],
      );
      if (written) {
        // An author withdrawing their own release knows it already.
        if (authorOf(record.createdBy) !== authorOf(decider.ref)) {
          await this.noticeDecision(
            record,
            decider.ref,
            'REJECTED',
            input,
            false,
          );
        }
        return;
      }
    }
    throw changing(id);
  }

  /**
   * Starts every release that waited for a freeze window now closed on all its clusters (the
   * release task's turn); one that cannot start yet (another release of its component runs)
   * keeps waiting and is tried again next turn.
   */
  async openClosedWindows(): Promise<void> {
    const { stores, windows, clock, logger } = this.options;
    const waiting = await stores.releases.listOpenReleases({
      phases: ['WAITING_FOR_WINDOW'],
    });
    for (const record of waiting) {
      try {
        const now = clock();
        const clusters = await this.clustersOf(record);
        const frozen = windows?.frozen(labelled(clusters), now) ?? [];
        const gate = record.gate!;
        if (gatePhase(gate, frozen) !== 'OPEN') continue;
        await this.open(
          record,
          gate,
          'fleet-release',
          [
            event(record, {
              actor: 'fleet-release',
              from: 'WAITING_FOR_WINDOW',
              to: 'WAITING_FOR_WINDOW',
              reason: 'WINDOW_CLOSED',
              message: `Freeze window '${
                gate.window?.name ?? ''
              }' closed: the release starts`,
            }),
          ],
          now,
        );
      } catch (error) {
        logger?.info(
          `Release ${record.id} waits on after its freeze window closed: ${
            asError(error).message
          }`,
        );
      }
    }
  }

  /** Starts a release whose gate opened, as its author's. */
  private async open(
    record: ReleaseRecord,
    gate: ReleaseGate,
    by: string,
    events: NewEvent[],
    now: Date,
  ): Promise<void> {
    const application = await this.options.stores.applications.getApplication(
      record.applicationId,
    );
    if (!application || application.removing) {
      throw new ConflictError(
        `The application of release '${record.id}' is ${
          application ? 'being removed' : 'gone'
        }: reject the release`,
      );
    }
    const clusters = await this.clustersOf(record);
    await this.options.start(
      application,
      clusters,
      {
        ...record.request,
        clusters: clusters.map(c => c.name),
        strategy: record.strategy,
        stage: record.stage,
      },
      record.createdBy,
      {
        record,
        change: { gate: opened(gate, by, now) },
        events: [
          ...events,
          event(record, {
            actor: by,
            from: record.phase,
            to: record.strategy ? 'PROGRESSING' : 'STARTING',
            reason: 'GATE_OPENED',
            message: `Started ${
              by === 'fleet-release'
                ? 'when its freeze window closed'
                : `on ${by}'s approval`
            }`,
          }),
        ],
      },
    );
  }

  private async waiting(
    id: string,
    action: 'approve' | 'reject',
  ): Promise<ReleaseRecord> {
    const record = await this.options.stores.releases.getRelease(id);
    if (!record) throw new NotFoundError(`Release '${id}' not found`);
    if (!isWaiting(record.phase) || !record.gate) {
      throw new ConflictError(
        `Release '${id}' is ${
          record.phase === 'REJECTED' ? 'REJECTED' : 'not waiting'
        }: there is nothing to ${action}`,
      );
    }
    return record;
  }

  /** The release's clusters as they are now (one since removed is left out). */
  private async clustersOf(record: ReleaseRecord): Promise<ClusterRecord[]> {
    const names = record.request.clusters ?? [];
    const found = await Promise.all(
      names.map(n => this.options.stores.clusters.getCluster(n)),
    );
    return found.filter((c): c is ClusterRecord => !!c);
  }

  private async noticeDecision(
    record: ReleaseRecord,
    decider: string,
    decision: 'APPROVED' | 'REJECTED',
    input: DecisionInput,
    started: boolean,
  ) {
    const application = await this.options.stores.applications.getApplication(
      record.applicationId,
    );
    if (!application) return;
    await this.notify(n =>
      n.decided({
        releaseId: record.id,
        entityRef: application.entityRef,
        author: record.createdBy,
        decider,
        decision,
        comment: input.comment ?? null,
        started,
      }),
    );
  }

  /** Notices never fail the decision they follow. */
  private async notify(send: (n: ReleaseGateNotices) => Promise<void>) {
    const { notices, logger } = this.options;
    if (!notices) return;
    try {
      await send(notices);
    } catch (error) {
      logger?.warn(
        `Could not send a release notice: ${asError(error).message}`,
      );
    }
  }
}

function labelled(clusters: ClusterRecord[]) {
  return clusters.map(c => ({ name: c.name, labels: c.labels ?? {} }));
}

function changing(id: string): ConflictError {
  return new ConflictError(
    `Release '${id}' kept changing while it was decided on: try again`,
  );
}

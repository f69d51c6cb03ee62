import { createTemplateAction } from '@backstage/plugin-scaffolder-node';
import { reasonWords, type ReleaseStrategy } from '@cnp/plugin-fleet-common';
import type { FleetService } from '@cnp/plugin-fleet-node';
import { toError } from '@backstage/errors';
import { entityRefInput, versionInput } from './inputs';
import { examples } from './createFleetReleaseAction.examples';

/**
 * `fleet:release`: releases a component to every cluster its Fleet application is placed on (or
 * the named ones) at once: a new revision of the given image on each, OFFLINE clusters skipped
 * and listed. With a `strategy`, the release is progressive: waves of clusters, canary steps per
 * cluster, analysis and rollback; the action passes it to Fleet unchanged and Fleet validates it,
 * so an invalid strategy fails the step with Fleet's own reason. On behalf of the user who runs
 * the template, so Fleet's `fleet.release.manage` check applies to them.
 *
 * @public
 */
export function createFleetReleaseAction(options: {
  client: Pick<FleetService, 'listApplications' | 'release'>;
}) {
  const { client } = options;
  return createTemplateAction({
    id: 'fleet:release',
    description:
      'Releases a new image of a component to every cluster it runs on with Fleet',
    supportsDryRun: true,
    examples,
    schema: {
      input: {
        entityRef: z => entityRefInput(z),
        image: z =>
          z
            .string()
            .min(1)
            .max(512)
            .optional()
            .describe("Image (default: each cluster's current one)"),
        replicas: z =>
          z.number().int().min(0).max(1000).optional().describe('Replicas'),
        version: z => versionInput(z, 'release'),
        stage: z =>
          z
            .string()
            .min(1)
            .max(63)
            .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
            .optional()
            .describe(
              "The application's stage to release to (its clusters); a stage that requires another takes only a version that stage verified",
            ),
        clusters: z =>
          z
            .array(z.string().min(1).max(63))
            .min(1)
            .optional()
            .describe(
              'Only these clusters (default: every cluster the application is placed on)',
            ),
        strategy: z =>
          z
            .object({
              waves: z
                .array(z.record(z.unknown()))
                .optional()
                .describe(
                  'Waves of clusters, run in order; each `{ clusters: [..] }`, `{ clusterSelector: { label: value } }` or `{ percent: 1-100 }`',
                ),
              canary: z
                .record(z.unknown())
                .optional()
                .describe(
                  'Canary per cluster: `steps` (`{ setWeight: 0-100 }` or `{ pause: { duration?: 30s } }`; `pause: {}` waits for promote), `maxSurge`, `maxUnavailable`, `trafficRouting.istio` or `trafficRouting.gatewayAPI`',
                ),
              analysis: z
                .record(z.unknown())
                .optional()
                .describe(
                  'Analysis: `templates` of `{ name, interval, failureLimit, successCondition, provider: { prometheus: { address, query } } }`',
                ),
              rollback: z
                .record(z.unknown())
                .optional()
                .describe(
                  'Rollback: `{ enabled, timeout }`; on a failed analysis every cluster goes back to its previous revision',
                ),
            })
            .passthrough()
            // Typed as the strategy Fleet reads; Fleet, not the action, validates it.
            .transform(strategy => strategy as unknown as ReleaseStrategy)
            .optional()
            .describe(
              'A progressive release strategy (waves, canary steps, analysis, rollback), after Argo Rollouts; passed to Fleet unchanged, which validates it. Without it, every cluster gets the new revision at once',
            ),
      },
      output: {
        releaseId: z => z.string().describe('The id of the Fleet release'),
        clusters: z =>
          z.array(z.string()).describe('The clusters the release went to'),
        skipped: z =>
          z
            .array(z.string())
            .describe('The clusters it skipped, with why (e.g. OFFLINE)'),
      },
    },
    async handler(ctx) {
      const { entityRef, image, replicas, clusters, strategy, version, stage } =
        ctx.input;
      if (ctx.isDryRun) {
        ctx.logger.info(`Dry run: would release ${entityRef} with Fleet`);
        ctx.output('releaseId', 'dry-run');
        ctx.output('clusters', []);
        ctx.output('skipped', []);
        return;
      }
      const credentials = await ctx.getInitiatorCredentials();
      const [application] = await client.listApplications(
        { entityRef },
        { credentials },
      );
      if (!application) {
        throw new Error(
          `Fleet did not release ${entityRef}: it has no Fleet application (deploy or register it first)`,
        );
      }
      let release;
      try {
        release = await client.release(
          application.id,
          {
            image,
            replicas,
            clusters,
            version,
            stage,
            ...(strategy && {
              strategy: strategy as unknown as ReleaseStrategy,
            }),
          },
          { credentials },
        );
      } catch (error) {
        throw new Error(
          `Fleet did not release ${entityRef}: ${toError(error).message}`,
        );
      }
      // A release to a stage that requires approvals (or into a freeze window) waits: it has
      // touched no cluster, and saying so beats listing none.
      if (
        release.status === 'WAITING_FOR_APPROVAL' ||
        release.status === 'WAITING_FOR_WINDOW'
      ) {
        ctx.logger.info(
          `The release of ${entityRef}${
            release.stage ? ` to stage ${release.stage}` : ''
          } is ${reasonWords(release.status).toLocaleLowerCase(
            'en-US',
          )}: nothing is applied until then`,
        );
        ctx.output('releaseId', release.id);
        ctx.output('clusters', []);
        ctx.output('skipped', []);
        return;
      }
      // A progressive release may not have touched a cluster yet: its targets are then its waves'.
      const released =
        release.targets.length > 0
          ? release.targets.map(t => t.cluster)
          : (release.progress?.waves ?? []).flat();
      const skipped = release.skipped.map(s => `${s.cluster}: ${s.reason}`);
      ctx.logger.info(
        `Released ${entityRef}${
          release.progress
            ? ` (progressive, ${reasonWords(release.status).toLocaleLowerCase(
                'en-US',
              )})`
            : ''
        }: ${released.join(', ') || 'no cluster'}${
          skipped.length ? `; skipped ${skipped.join('; ')}` : ''
        }`,
      );
      ctx.output('releaseId', release.id);
      ctx.output('clusters', released);
      ctx.output('skipped', skipped);
    },
  });
}

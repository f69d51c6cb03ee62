import { createTemplateAction } from '@backstage/plugin-scaffolder-node';
import type { FleetService } from '@cnp/plugin-fleet-node';
import { toError } from '@backstage/errors';
import { entityRefInput } from './inputs';

/**
 * `fleet:release`: releases a component to every cluster its Fleet application is placed on (or
 * the named ones) at once: a new revision of the given image on each, OFFLINE clusters skipped
 * and listed. On behalf of the user who runs the template, so Fleet's `fleet.release.manage`
 * check applies to them.
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
    examples: [
      {
        description: 'Release version 1.4.2 everywhere the component runs',
        example: [
          'steps:',
          '  - id: fleet-release',
          '    action: fleet:release',
          '    input:',
          '      entityRef: component:default/${{ parameters.name }}',
          '      image: ghcr.io/acme/payments:1.4.2',
        ].join('\n'),
      },
    ],
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
        clusters: z =>
          z
            .array(z.string().min(1).max(63))
            .min(1)
            .optional()
            .describe(
              'Only these clusters (default: every cluster the application is placed on)',
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
      const { entityRef, image, replicas, clusters } = ctx.input;
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
          { image, replicas, clusters },
          { credentials },
        );
      } catch (error) {
        throw new Error(
          `Fleet did not release ${entityRef}: ${toError(error).message}`,
        );
      }
      const released = release.targets.map(t => t.cluster);
      const skipped = release.skipped.map(s => `${s.cluster}: ${s.reason}`);
      ctx.logger.info(
        `Release ${release.id} of ${entityRef}: ${
          released.join(', ') || 'no cluster'
        }${skipped.length ? `; skipped ${skipped.join('; ')}` : ''}`,
      );
      ctx.output('releaseId', release.id);
      ctx.output('clusters', released);
      ctx.output('skipped', skipped);
    },
  });
}

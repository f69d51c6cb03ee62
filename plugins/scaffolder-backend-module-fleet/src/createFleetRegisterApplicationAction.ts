import { createTemplateAction } from '@backstage/plugin-scaffolder-node';
import type { FleetService } from '@cnp/plugin-fleet-node';
import { entityRefInput } from './inputs';
import { toError } from '@backstage/errors';
import { examples } from './createFleetRegisterApplicationAction.examples';

/**
 * `fleet:application:register`: records a component as a Fleet application with origin
 * `scaffolded`, on behalf of the user who runs the template (Fleet checks
 * `fleet.deployment.create` on the entity for that user). A component that brings its own
 * manifests is registered with no image: what it runs is in its repository.
 *
 * @public
 */
export function createFleetRegisterApplicationAction(options: {
  client: Pick<FleetService, 'registerApplication'>;
}) {
  const { client } = options;
  return createTemplateAction({
    id: 'fleet:application:register',
    description:
      'Registers a catalog component with Fleet as a scaffolded application (image, replicas, port, placement)',
    supportsDryRun: true,
    examples,
    schema: {
      input: {
        entityRef: z => entityRefInput(z),
        spec: z =>
          z
            .object({
              image: z
                .string()
                .min(1)
                .max(512)
                .optional()
                .describe(
                  "Container image of Fleet's generated workload, e.g. ghcr.io/acme/payments:1.0; none for a component that brings its own manifests (cnp.io/manifests-ref)",
                ),
              replicas: z
                .number()
                .int()
                .min(0)
                .max(1000)
                .optional()
                .describe('Replicas (Fleet default: 3)'),
              port: z
                .number()
                .int()
                .min(1)
                .max(65535)
                .optional()
                .describe('Container port (default 8000)'),
            })
            .describe('What to run'),
        placement: z =>
          z
            .object({
              clusters: z
                .array(z.string())
                .max(500)
                .optional()
                .describe('Cluster names'),
              clusterSelector: z
                .record(z.string())
                .optional()
                .describe('Cluster labels to match, e.g. { env: prod }'),
            })
            .optional()
            .describe('Where it should run'),
      },
      output: {
        applicationId: z =>
          z.string().describe('The id of the Fleet application'),
      },
    },
    async handler(ctx) {
      const { entityRef, spec, placement } = ctx.input;
      if (ctx.isDryRun) {
        ctx.logger.info(
          `Dry run: would register ${entityRef} with Fleet (origin scaffolded)`,
        );
        ctx.output('applicationId', 'dry-run');
        return;
      }
      const credentials = await ctx.getInitiatorCredentials();
      let application;
      try {
        application = await client.registerApplication(
          { entityRef, origin: 'scaffolded', spec, placement },
          { credentials },
        );
      } catch (error) {
        throw new Error(
          `Fleet did not register ${entityRef}: ${toError(error).message}`,
        );
      }
      ctx.logger.info(
        `Registered ${application.entityRef} with Fleet (origin ${application.origin})`,
      );
      ctx.output('applicationId', application.id);
    },
  });
}

import { reasonWords, type Deployment } from '@cnp/plugin-fleet-common';
import { createTemplateAction } from '@backstage/plugin-scaffolder-node';
import type { FleetService } from '@cnp/plugin-fleet-node';
import { entityRefInput, versionInput } from './inputs';
import { toError } from '@backstage/errors';
import { examples } from './createFleetDeployAction.examples';

const IN_PROGRESS = ['PENDING', 'PROGRESSING'];

/**
 * `fleet:deploy`: deploys a component to one cluster through Fleet, on behalf of the user who
 * runs the template, and reports the deployment's status in its output. By default it follows
 * the rollout until `DEPLOYED` or `FAILED` (at most `timeoutSeconds`). A refusal by Fleet — 409
 * for an OFFLINE cluster, 403, 404, 400 — fails the step with Fleet's words, and so does a
 * `FAILED` deployment.
 *
 * @public
 */
export function createFleetDeployAction(options: {
  client: Pick<FleetService, 'deploy' | 'listDeployments'>;
  /** How often a rollout is checked (default 2 s). */
  pollIntervalMs?: number;
}) {
  const { client } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 2_000;
  return createTemplateAction({
    id: 'fleet:deploy',
    description:
      'Deploys a component to a cluster with Fleet and reports the deployment status',
    supportsDryRun: true,
    examples,
    schema: {
      input: {
        entityRef: z => entityRefInput(z),
        cluster: z =>
          z.string().min(1).max(63).describe('The cluster to deploy to'),
        image: z =>
          z
            .string()
            .min(1)
            .max(512)
            .optional()
            .describe("Image (default: the application's)"),
        replicas: z =>
          z.number().int().min(0).max(1000).optional().describe('Replicas'),
        version: z => versionInput(z, 'deploy'),
        waitForRollout: z =>
          z
            .boolean()
            .optional()
            .describe(
              'Follow the rollout until DEPLOYED or FAILED (default true)',
            ),
        timeoutSeconds: z =>
          z
            .number()
            .int()
            .min(1)
            .max(3600)
            .optional()
            .describe('How long to follow the rollout (default 300)'),
      },
      output: {
        deploymentId: z =>
          z.string().describe('The id of the Fleet deployment'),
        status: z =>
          z
            .string()
            .describe('PENDING, PROGRESSING, DEPLOYED, DEGRADED or FAILED'),
        statusReason: z =>
          z.string().optional().describe('Why, e.g. CLUSTER_NOT_CONFIGURED'),
        statusText: z =>
          z
            .string()
            .describe(
              'The status and its reason in words, for a template\'s output text: "Deployed", "Degraded (Cluster offline)"',
            ),
      },
    },
    async handler(ctx) {
      const { entityRef, cluster, image, replicas, version } = ctx.input;
      if (ctx.isDryRun) {
        ctx.logger.info(`Dry run: would deploy ${entityRef} to ${cluster}`);
        ctx.output('deploymentId', 'dry-run');
        ctx.output('status', 'PENDING');
        ctx.output('statusText', reasonWords('PENDING'));
        return;
      }
      const credentials = await ctx.getInitiatorCredentials();
      let deployment: Deployment;
      try {
        deployment = await client.deploy(
          { entityRef, cluster, image, replicas, version },
          { credentials },
        );
      } catch (error) {
        throw new Error(
          `Fleet did not deploy ${entityRef} to '${cluster}': ${
            toError(error).message
          }`,
        );
      }
      ctx.logger.info(
        `Deploying ${entityRef} to ${cluster}: ${reasonWords(
          deployment.status,
        )}`,
      );

      if (ctx.input.waitForRollout ?? true) {
        const deploymentId = deployment.id;
        const deadline = Date.now() + (ctx.input.timeoutSeconds ?? 300) * 1000;
        while (
          IN_PROGRESS.includes(deployment.status) &&
          Date.now() < deadline &&
          !ctx.signal?.aborted
        ) {
          await new Promise(resolve => setTimeout(resolve, pollIntervalMs));
          const current = (
            await client.listDeployments(
              { entityRef, cluster },
              { credentials },
            )
          ).find(d => d.id === deploymentId);
          if (!current) break;
          if (current.status !== deployment.status) {
            ctx.logger.info(
              `${entityRef} on ${cluster}: ${reasonWords(current.status)}${
                current.message ? ` (${current.message})` : ''
              }`,
            );
          }
          deployment = current;
        }
      }

      ctx.output('deploymentId', deployment.id);
      ctx.output('status', deployment.status);
      ctx.output(
        'statusText',
        `${reasonWords(deployment.status)}${
          deployment.statusReason
            ? ` (${reasonWords(deployment.statusReason)})`
            : ''
        }`,
      );
      if (deployment.statusReason)
        ctx.output('statusReason', deployment.statusReason);
      if (deployment.status === 'FAILED') {
        throw new Error(
          `Deployment of ${entityRef} to '${cluster}' FAILED (${
            deployment.statusReason ?? 'no reason'
          }): ${deployment.message ?? ''}`.trim(),
        );
      }
    },
  });
}

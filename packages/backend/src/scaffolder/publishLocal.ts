import {
  coreServices,
  createBackendModule,
  type AuthService,
} from '@backstage/backend-plugin-api';
import { stringifyEntityRef, type Entity } from '@backstage/catalog-model';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import {
  catalogServiceRef,
  locationSpecToMetadataName,
  type CatalogService,
} from '@backstage/plugin-catalog-node';
import {
  createTemplateAction,
  scaffolderActionsExtensionPoint,
} from '@backstage/plugin-scaffolder-node';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';

/** The config key of the folder scaffolded components are published to. */
export const LOCAL_PUBLISH_CONFIG_KEY = 'localPublish.directory';

/**
 * The catalog location that reads what `publish:local` publishes: a `file` location whose
 * target is `<directory>/*\/catalog-info.yaml`, as the catalog resolves it (absolute).
 */
export function localPublishLocationTarget(directory: string): string {
  return path.join(path.resolve(directory), '*', 'catalog-info.yaml');
}

/**
 * `publish:local`: this example portal's stand-in for `publish:github` + `catalog:register`
 * where there is no git host. It copies the task's workspace to `<directory>/<name>/`, asks the
 * catalog to read the `file` location that globs that folder now rather than at its next
 * refresh, and waits until the component's entity is in the catalog, so the template's output
 * can link to its page. A name already published is refused.
 */
export function createPublishLocalAction(options: {
  directory: string;
  catalog: CatalogService;
  auth: AuthService;
  /** How long to wait for the entity (default 60 s). */
  timeoutMs?: number;
}) {
  const { catalog, auth } = options;
  const root = path.resolve(options.directory);
  const target = localPublishLocationTarget(root);
  return createTemplateAction({
    id: 'publish:local',
    description:
      'Publishes the workspace to the portal’s local folder and registers its catalog-info.yaml with the catalog at once (offline stand-in for publish:github + catalog:register)',
    schema: {
      input: {
        name: z =>
          z
            .string()
            .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/)
            .describe('Folder name: the component name, a DNS label'),
      },
      output: {
        entityRef: z => z.string(),
        path: z => z.string(),
      },
    },
    async handler(ctx) {
      const dest = path.join(root, ctx.input.name);
      const info = await fs
        .readFile(path.join(ctx.workspacePath, 'catalog-info.yaml'), 'utf8')
        .catch(() => {
          throw new InputError(
            'The workspace has no catalog-info.yaml to publish',
          );
        });
      const entity = parse(info) as Entity;
      if (!entity?.kind || !entity.metadata?.name) {
        throw new InputError(
          'The workspace catalog-info.yaml is not an entity (kind and metadata.name are needed)',
        );
      }
      // What the template publishes is the component it names, nothing else: another kind or
      // name would put (or claim) someone else's entity.
      if (
        entity.kind.toLocaleLowerCase('en-US') !== 'component' ||
        (entity.metadata.namespace ?? 'default') !== 'default' ||
        entity.metadata.name !== ctx.input.name
      ) {
        throw new InputError(
          `The workspace catalog-info.yaml must describe component:default/${ctx.input.name}`,
        );
      }
      const entityRef = stringifyEntityRef(entity);
      const credentials = await auth.getOwnServiceCredentials();
      if (await catalog.getEntityByRef(entityRef, { credentials })) {
        throw new ConflictError(
          `${entityRef} is already in the catalog; pick another name`,
        );
      }
      await fs.mkdir(root, { recursive: true });
      try {
        await fs.mkdir(dest);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
          throw new ConflictError(
            `'${ctx.input.name}' is already published in ${root}; pick another name`,
          );
        }
        throw error;
      }
      try {
        await publish();
      } catch (error) {
        // A step that failed leaves nothing behind: the same name can be tried again.
        await fs.rm(dest, { recursive: true, force: true });
        throw error;
      }
      ctx.logger.info(`${entityRef} is in the catalog`);
      ctx.output('entityRef', entityRef);
      ctx.output('path', dest);

      async function publish() {
        await fs.cp(ctx.workspacePath, dest, { recursive: true });
        ctx.logger.info(`Published the workspace to ${dest}`);

        // The catalog's location for the folder (named from its spec, as the catalog names the
        // locations of its config): read now. Until a first component is published its glob
        // matches nothing, and the catalog keeps it out of the entities it lists.
        const locationRef = `location:default/${locationSpecToMetadataName({
          type: 'file',
          target,
        })}`;
        try {
          await catalog.refreshEntity(locationRef, { credentials });
        } catch (error) {
          throw new NotFoundError(
            `The catalog could not refresh ${locationRef}: is a file location with the target ${target} in catalog.locations?`,
            error,
          );
        }
        const deadline = Date.now() + (options.timeoutMs ?? 60_000);
        while (!(await catalog.getEntityByRef(entityRef, { credentials }))) {
          if (Date.now() > deadline) {
            throw new Error(
              `${entityRef} did not reach the catalog within ${Math.round(
                (options.timeoutMs ?? 60_000) / 1000,
              )} s: is a file location with the target ${target} in catalog.locations?`,
            );
          }
          await new Promise(r => setTimeout(r, 500));
        }
      }
    },
  });
}

/** Adds `publish:local` to the scaffolder, publishing to `localPublish.directory`. */
export const scaffolderModulePublishLocal = createBackendModule({
  pluginId: 'scaffolder',
  moduleId: 'publish-local',
  register(reg) {
    reg.registerInit({
      deps: {
        scaffolder: scaffolderActionsExtensionPoint,
        config: coreServices.rootConfig,
        catalog: catalogServiceRef,
        auth: coreServices.auth,
      },
      async init({ scaffolder, config, catalog, auth }) {
        const directory = config.getOptionalString(LOCAL_PUBLISH_CONFIG_KEY);
        if (!directory) return;
        scaffolder.addActions(
          createPublishLocalAction({ directory, catalog, auth }),
        );
      },
    });
  },
});

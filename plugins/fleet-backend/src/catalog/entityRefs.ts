import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import { InputError } from '@backstage/errors';
import { asError } from '../util/errors';

const ENTITY_NAME = /^[a-zA-Z0-9]([-_.a-zA-Z0-9]*[a-zA-Z0-9])?$/;

/**
 * `component:default/payments` from `payments`, `Component:Default/payments`…; refuses what is
 * not a component's ref with an InputError.
 */
export function normalizeEntityRef(ref: string): string {
  let parsed;
  try {
    parsed = parseEntityRef(ref, {
      defaultKind: 'component',
      defaultNamespace: 'default',
    });
  } catch (error) {
    throw new InputError(
      `Invalid entityRef '${ref}': ${asError(error).message}`,
    );
  }
  if (parsed.kind.toLocaleLowerCase('en-US') !== 'component') {
    throw new InputError(
      `Invalid entityRef '${ref}': Fleet deploys components, not ${parsed.kind} entities`,
    );
  }
  for (const [part, value] of [
    ['namespace', parsed.namespace],
    ['name', parsed.name],
  ] as const) {
    if (value.length > 63 || !ENTITY_NAME.test(value)) {
      throw new InputError(
        `Invalid entityRef '${ref}': the ${part} must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`,
      );
    }
  }
  return stringifyEntityRef(parsed);
}

/**
 * A full group entity ref from config (`payments` is `group:default/payments`; any kind and
 * namespace may be given); a ref that does not parse stops the backend naming the setting.
 */
export function configGroupRef(ref: string, key: string): string {
  try {
    return stringifyEntityRef(
      parseEntityRef(ref, {
        defaultKind: 'group',
        defaultNamespace: 'default',
      }),
    );
  } catch (error) {
    throw new Error(`Invalid ${key} entry '${ref}': ${asError(error).message}`);
  }
}

/** What the inputs below need of the zod instance the scaffolder hands an action's schema. */
interface StringSchema<S> {
  min(length: number): S;
  max(length: number): S;
  describe(description: string): S;
}

/** A string schema that can also be checked against a pattern and left out. */
interface OptionalPatternSchema<S, O> extends StringSchema<S> {
  regex(pattern: RegExp): S;
  optional(): O;
}

/**
 * The `entityRef` input both Fleet actions take: the component, as the catalog names it. Use it
 * as `entityRef: z => entityRefInput(z)`, so the action's input type stays the zod string's.
 */
export function entityRefInput<S extends StringSchema<S>>(z: {
  string(): S;
}): S {
  return z
    .string()
    .min(1)
    .max(255)
    .describe('The component, e.g. component:default/payments');
}

/**
 * The `version` input of the deploy and release actions: for a component that brings its own
 * manifests, the branch, tag or commit to read them at. Use it as `version: z =>
 * versionInput(z, 'deploy')`.
 */
export function versionInput<O, S extends OptionalPatternSchema<S, O>>(
  z: { string(): S },
  verb: string,
): O {
  return z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._/-]*$/)
    .describe(
      `For a component with its own manifests (cnp.io/manifests-ref): the branch, tag or commit to ${verb}`,
    )
    .optional();
}

/** What the inputs below need of the zod instance the scaffolder hands an action's schema. */
interface StringSchema<S> {
  min(length: number): S;
  max(length: number): S;
  describe(description: string): S;
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

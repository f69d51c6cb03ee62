/*
 * Kubernetes label selectors, as Fleet reads them: from a request, an application's placement or
 * a component's `cnp.io/cluster-selector` annotation. The one reading lives in
 * `@cnp/plugin-fleet-common`, which the frontend shares.
 */
export {
  isEmptySelector,
  isStructuredSelector,
  matchesSelector,
  parseLabelSelector,
} from '@cnp/plugin-fleet-common';

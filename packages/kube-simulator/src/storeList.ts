/**
 * A LIST of the simulated cluster store (store.ts): label and field selectors, and pages with
 * continue tokens (remainingItemCount when nothing is filtered), in key order.
 */
import { errors } from './errors';
import { KIND_FIELD_SELECTORS } from './podResources';
import { apiVersionOf, ResourceDef } from './resourceDef';
import {
  matches,
  matchesFields,
  parseFieldSelector,
  parseLabelSelector,
} from './selectors';
import { Entry, ListQuery, metaOf, SimList } from './storeTypes';
import { asObject, clone, JsonObject } from './util';

/** One page of the objects of `def` (in `namespace`, or all) the query selects. */
export function listPage(
  entries: ReadonlyMap<string, Entry>,
  revision: number,
  def: ResourceDef,
  namespace: string | undefined,
  query: ListQuery,
): SimList {
  const labelReqs = query.labelSelector
    ? parseLabelSelector(query.labelSelector)
    : [];
  const fieldReqs = query.fieldSelector
    ? parseFieldSelector(query.fieldSelector, KIND_FIELD_SELECTORS[def.kind])
    : [];
  let start = '';
  if (query.continueToken) {
    try {
      const token = JSON.parse(
        Buffer.from(query.continueToken, 'base64url').toString('utf8'),
      );
      if (typeof token.start !== 'string') throw new Error('no start key');
      start = token.start;
    } catch {
      throw errors.badRequest(
        'continue key is not valid: invalid continue token',
      );
    }
  }
  const prefix = `${def.group}/${def.plural}/${
    namespace === undefined ? '' : `${namespace}/`
  }`;
  const keys = [...entries.keys()]
    .filter(k => k.startsWith(prefix) && k > start)
    .sort();
  const selected: Array<[string, JsonObject]> = [];
  for (const key of keys) {
    const obj = entries.get(key)!.obj;
    const labels = asObject(metaOf(obj).labels) as
      | Record<string, string>
      | undefined;
    if (matches(labelReqs, labels) && matchesFields(fieldReqs, obj))
      selected.push([key, obj]);
  }
  const limit = query.limit && query.limit > 0 ? query.limit : undefined;
  const page = limit ? selected.slice(0, limit) : selected;
  const metadata: SimList['metadata'] = {
    resourceVersion: String(revision),
  };
  if (limit && selected.length > limit) {
    const lastKey = page[page.length - 1][0];
    metadata.continue = Buffer.from(
      JSON.stringify({
        v: 'meta.k8s.io/v1',
        rv: revision,
        start: lastKey,
      }),
    ).toString('base64url');
    if (!query.labelSelector && !query.fieldSelector) {
      metadata.remainingItemCount = selected.length - limit;
    }
  }
  const items = page.map(([, obj]) => {
    const item = clone(obj);
    if (def.builtin) {
      // The API server encodes list items of built-in types without kind/apiVersion.
      delete item.kind;
      delete item.apiVersion;
    }
    return item;
  });
  return {
    kind: `${def.kind}List`,
    apiVersion: apiVersionOf(def),
    metadata,
    items,
  };
}

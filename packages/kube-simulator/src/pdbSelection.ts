/**
 * What a PodDisruptionBudget covers: the simulated pods of the workloads in its namespace whose
 * pod template its selector matches, counted from their status (a DaemonSet's scheduled and
 * available pods, another workload's replicas and available replicas).
 */
import { matches, requirementsOf } from './selectors';
import { availableOf, Entry, metaOf } from './storeTypes';
import { asObject, isPlainObject, JsonObject } from './util';
import { SelectedPods } from './workloads';

/** The pods of `entries`' workloads that the PDB's selector matches (none for a null one). */
export function podsSelectedBy(
  pdb: JsonObject,
  entries: Iterable<Entry>,
): SelectedPods {
  const selector = asObject(pdb.spec)?.selector;
  const pods: SelectedPods = { expected: 0, healthy: 0 };
  if (!isPlainObject(selector)) return pods; // a null selector selects no pods
  const reqs = requirementsOf(selector);
  const namespace = metaOf(pdb).namespace;
  for (const entry of entries) {
    if (!entry.clock || metaOf(entry.obj).namespace !== namespace) continue;
    const spec = asObject(entry.obj.spec) ?? {};
    const labels = asObject(
      asObject(asObject(spec.template)?.metadata)?.labels,
    ) as Record<string, string> | undefined;
    if (!matches(reqs, labels)) continue;
    const status = asObject(entry.obj.status) ?? {};
    const count = (value: unknown) => (typeof value === 'number' ? value : 0);
    if (entry.def.kind === 'DaemonSet') {
      pods.expected += count(status.currentNumberScheduled);
      pods.healthy += count(status.numberAvailable);
      continue;
    }
    pods.expected += count(status.replicas);
    pods.healthy += availableOf(entry.obj);
  }
  return pods;
}

import { EntityName } from '../EntityName';
import { RelativeTime } from '../RelativeTime';
import {
  approvalsText,
  gateStatusText,
  windowText,
} from '../ReleasePanel/gateText';
import type { FleetApi } from '../../api';
import { ReleaseListCard, type ReleaseColumn } from './ReleaseListCard';

const load = (api: FleetApi) => api.listWaitingReleases();

const columns: ReleaseColumn[] = [
  { heading: 'Component', cell: r => <EntityName entityRef={r.entityRef} /> },
  { heading: 'Stage', cell: r => r.stage ?? '—' },
  { heading: 'Status', cell: r => gateStatusText(r) },
  {
    heading: 'Since',
    cell: r => <RelativeTime value={r.createdAt} />,
    nowrap: true,
  },
  {
    heading: 'Waiting for',
    cell: r =>
      [approvalsText(r.gate), windowText(r.gate)].filter(Boolean).join('; '),
  },
];

/**
 * The fleet page's releases waiting before they start, oldest first: the component, its stage,
 * what it waits for, since when, and who must approve it or which freeze window holds it.
 */
export function FleetWaitingReleasesCard(props: { pollIntervalMs?: number }) {
  return (
    <ReleaseListCard
      title="Releases waiting"
      load={load}
      columns={columns}
      empty="No release is waiting for an approval or a freeze window."
      pollIntervalMs={props.pollIntervalMs}
    />
  );
}

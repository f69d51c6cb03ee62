import type { Release } from '@cnp/plugin-fleet-common';
import type { FleetApi } from '../../api';
import { ActorName, EntityName } from '../EntityName';
import { RelativeTime } from '../RelativeTime';
import { releasedText } from '../ReleasePanel/releaseText';
import { ReleaseListCard, type ReleaseColumn } from './ReleaseListCard';

const statusWords: Partial<Record<Release['status'], string>> = {
  PROGRESSING: 'progressing',
  PAUSED: 'paused',
  ABORTING: 'rolling back',
};

/**
 * How far a release under way is, in words: "wave 2 of 3, 4 of 6 clusters done" (a cluster is
 * done once its canary completed); "starting" before its first step is written.
 */
export function releaseProgressText(release: Release): string {
  const progress = release.progress;
  if (!progress) return 'starting';
  const done = progress.clusters.filter(c => c.state === 'DONE').length;
  const total = progress.clusters.length;
  const waves = progress.waves.length;
  const wave =
    waves > 1
      ? `wave ${Math.min(progress.currentWave + 1, waves)} of ${waves}, `
      : '';
  return `${wave}${done} of ${total} clusters done`;
}

const load = (api: FleetApi) => api.listReleasesUnderWay();

const columns: ReleaseColumn[] = [
  { heading: 'Component', cell: r => <EntityName entityRef={r.entityRef} /> },
  {
    heading: 'Releases',
    cell: r => releasedText(r) ?? 'the current image',
    nowrap: true,
  },
  { heading: 'Status', cell: r => statusWords[r.status] ?? r.status },
  { heading: 'Progress', cell: r => releaseProgressText(r) },
  {
    heading: 'Started',
    cell: r => (
      <>
        <RelativeTime value={r.createdAt} /> by{' '}
        <ActorName actor={r.createdBy} />
      </>
    ),
  },
];

/**
 * The fleet page's releases under way with a strategy, oldest first: the component, what it
 * releases, its status in words, how far it is, who started it and when. The component's name
 * leads to its page, where the release panel steers it.
 */
export function FleetReleasesUnderWayCard(props: { pollIntervalMs?: number }) {
  return (
    <ReleaseListCard
      title="Releases under way"
      load={load}
      columns={columns}
      empty="No release is under way."
      pollIntervalMs={props.pollIntervalMs}
    />
  );
}

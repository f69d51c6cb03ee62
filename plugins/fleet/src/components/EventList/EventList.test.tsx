import { entityRouteRef } from '@backstage/plugin-catalog-react';
import { renderInTestApp } from '@backstage/test-utils';
import type { FleetEvent } from '@cnp/plugin-fleet-common';
import { screen, within } from '@testing-library/react';
import { EventList } from './EventList';

const base = {
  actor: 'fleet-health',
  createdAt: new Date().toISOString(),
};

const events: FleetEvent[] = [
  {
    ...base,
    id: '4',
    subjectKind: 'deployment',
    subject: 'ad7bd62a-5593-49f6-b576-8c735ee344a2',
    entityRef: 'component:default/payments',
    cluster: 'sim-2',
    from: 'DEPLOYED',
    to: 'DEGRADED',
    reason: 'CLUSTER_OFFLINE',
    message: null,
  },
  {
    ...base,
    id: '3',
    subjectKind: 'cluster',
    subject: 'sim-2',
    entityRef: null,
    cluster: 'sim-2',
    from: 'ONLINE',
    to: 'OFFLINE',
    reason: 'FAILURE_THRESHOLD_REACHED',
    message: 'FAILURE_THRESHOLD_REACHED: 2/2 consecutive probes failed',
  },
  {
    ...base,
    id: '2',
    subjectKind: 'release',
    subject: 'b3a1c2d4-0000-4000-8000-000000000001',
    entityRef: 'component:default/checkout',
    cluster: null,
    from: null,
    to: 'ROLLED_BACK',
    reason: 'ANALYSIS_FAILED',
    message: null,
  },
  {
    ...base,
    id: '1',
    subjectKind: 'deployment',
    subject: '0f0e0d0c-0b0a-4009-8807-060504030201',
    entityRef: null,
    cluster: null,
    from: null,
    to: 'REMOVED',
    reason: null,
    message: null,
  },
];

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe('EventList', () => {
  it('names what each event concerns, linked, with reasons in words beside their codes, and never shows a bare id', async () => {
    await renderInTestApp(<EventList events={events} showSubject />, {
      mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef },
    });
    const rows = within(
      screen.getByRole('list', { name: 'Events' }),
    ).getAllByRole('listitem');
    expect(rows[0]).toHaveTextContent(
      /^payments on sim-2: DEPLOYED → DEGRADED — Cluster offline/,
    );
    expect(
      within(rows[0]).getByRole('link', { name: 'payments' }),
    ).toHaveAttribute('href', '/catalog/default/component/payments');
    expect(
      within(rows[0]).getByRole('link', { name: 'sim-2' }),
    ).toHaveAttribute('href', '/catalog/default/resource/sim-2');
    expect(rows[1]).toHaveTextContent(
      /^cluster sim-2: ONLINE → OFFLINE — Outage confirmed/,
    );
    // A message that starts with a code says it in words too.
    expect(rows[1]).toHaveTextContent(
      'Outage confirmed: 2/2 consecutive probes failed · by',
    );
    expect(rows[1].textContent).not.toMatch(/FAILURE_THRESHOLD_REACHED/);
    // A status of more than one word in words, its code on hover.
    expect(rows[2]).toHaveTextContent(
      /^release of checkout: Rolled back — Analysis failed/,
    );
    expect(within(rows[2]).getByTitle('ROLLED_BACK')).toHaveTextContent(
      'Rolled back',
    );
    // Nothing is known any more: said so, with a short id to search for.
    expect(rows[3]).toHaveTextContent(
      /^deployment \(removed\) 0f0e0d0c: REMOVED/,
    );
    for (const row of rows) {
      expect(row.textContent).not.toMatch(UUID);
    }
  });
});

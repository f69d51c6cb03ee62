import { InfoCard } from '@backstage/core-components';
import type { FleetEvent } from '@cnp/plugin-fleet-common';
import Grid from '@material-ui/core/Grid';
import { memo } from 'react';
import { EventList } from '../EventList';

/**
 * The fleet page's latest status changes, each naming what it concerns, as an item of its grid;
 * rendered again only when they change.
 */
export const FleetEventsCard = memo(function EventsCard(props: {
  events: FleetEvent[];
}) {
  return (
    <Grid item xs={12}>
      <InfoCard title="Recent events">
        <EventList events={props.events} showSubject />
      </InfoCard>
    </Grid>
  );
});

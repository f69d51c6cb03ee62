import { parseEntityRef } from '@backstage/catalog-model';
import { EntityRefLink } from '@backstage/plugin-catalog-react';
import type { FleetEvent } from '@cnp/plugin-fleet-common';
import List from '@material-ui/core/List';
import ListItem from '@material-ui/core/ListItem';
import ListItemText from '@material-ui/core/ListItemText';
import Typography from '@material-ui/core/Typography';
import { ClusterLink } from '../ClusterLink';
import { RelativeTime } from '../RelativeTime';
import { ReasonText, reasonWords } from '../StatusChip';
import { ActorName } from '../EntityName';

/** A component, linked to its catalog page, by its name. */
function ComponentLink(props: { entityRef: string }) {
  const ref = parseEntityRef(props.entityRef, { defaultKind: 'component' });
  return (
    <EntityRefLink entityRef={ref} title={props.entityRef}>
      {ref.name}
    </EntityRefLink>
  );
}

/**
 * A status of an event: a one-word status as the chips show it (`DEPLOYED`), a longer one in
 * words (`Rolled back` for `ROLLED_BACK`), its code on hover.
 */
function StatusWords(props: { status: string }) {
  const { status } = props;
  if (!status.includes('_')) return <>{status}</>;
  return (
    <span title={status} data-code={status}>
      {status.charAt(0) + status.slice(1).toLowerCase().replace(/_/g, ' ')}
    </span>
  );
}

/**
 * What an event is about, for people: "payments on sim-2", "cluster sim-2", "release of
 * payments", each linked; an id only when nothing else is known any more.
 */
function EventSubject(props: { event: FleetEvent }) {
  const { event } = props;
  if (event.subjectKind === 'cluster') {
    return (
      <>
        cluster <ClusterLink name={event.cluster ?? event.subject} />
      </>
    );
  }
  if (event.subjectKind === 'deployment' && event.entityRef) {
    return (
      <>
        <ComponentLink entityRef={event.entityRef} />
        {event.cluster && (
          <>
            {' '}
            on <ClusterLink name={event.cluster} />
          </>
        )}
      </>
    );
  }
  if (event.subjectKind === 'release' && event.entityRef) {
    return (
      <>
        release of <ComponentLink entityRef={event.entityRef} />
      </>
    );
  }
  return (
    <>
      {event.subjectKind} (removed){' '}
      <Typography component="code" variant="caption" color="textSecondary">
        {event.subject.slice(0, 8)}
      </Typography>
    </>
  );
}

/**
 * Status changes, newest first: what changed (with `showSubject`, named and linked), from → to,
 * the reason in words with its code, who and when.
 *
 * @public
 */
export function EventList(props: {
  events: FleetEvent[];
  showSubject?: boolean;
  emptyText?: string;
}) {
  if (props.events.length === 0) {
    return (
      <Typography variant="body2">
        {props.emptyText ?? 'No events yet.'}
      </Typography>
    );
  }
  return (
    <List dense aria-label="Events">
      {props.events.map(event => (
        <ListItem key={event.id} disableGutters data-event={event.id}>
          <ListItemText
            // Backstage's theme keeps list texts on one line and hides the rest: an event wraps
            // inside the card instead (a long URL in a message too) rather than being cut off.
            style={{ whiteSpace: 'normal' }}
            secondaryTypographyProps={{ style: { overflowWrap: 'anywhere' } }}
            primary={
              <>
                {props.showSubject && (
                  <strong data-testid="event-subject">
                    <EventSubject event={event} />:{' '}
                  </strong>
                )}
                {event.from && (
                  <>
                    <StatusWords status={event.from} /> →{' '}
                  </>
                )}
                <StatusWords status={event.to} />
                {event.reason && (
                  <>
                    {' — '}
                    <ReasonText
                      reason={event.reason}
                      variant="body2"
                      display="inline"
                    />
                  </>
                )}
              </>
            }
            secondary={
              <>
                {event.message ? `${reasonWords(event.message)} · ` : ''}
                by <ActorName actor={event.actor} /> ·{' '}
                <RelativeTime value={event.createdAt} />
              </>
            }
          />
        </ListItem>
      ))}
    </List>
  );
}

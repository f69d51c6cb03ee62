import type { FleetEvent } from '@cnp/plugin-fleet-common';
import List from '@material-ui/core/List';
import ListItem from '@material-ui/core/ListItem';
import ListItemText from '@material-ui/core/ListItemText';
import Typography from '@material-ui/core/Typography';
import { RelativeTime } from '../RelativeTime';

/**
 * Status changes, newest first: subject, from → to, reason, who and when.
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
        <ListItem key={event.id} disableGutters>
          <ListItemText
            primary={
              <>
                {props.showSubject && (
                  <strong>
                    {event.subjectKind} {event.subject}:{' '}
                  </strong>
                )}
                {event.from ? `${event.from} → ${event.to}` : event.to}
                {event.reason ? ` (${event.reason})` : ''}
              </>
            }
            secondary={
              <>
                {event.message ? `${event.message} · ` : ''}
                by {event.actor} · <RelativeTime value={event.createdAt} />
              </>
            }
          />
        </ListItem>
      ))}
    </List>
  );
}

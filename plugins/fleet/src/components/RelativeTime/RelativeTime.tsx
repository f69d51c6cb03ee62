const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** "3 minutes ago" from an ISO time, relative to `now`. */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (Math.abs(seconds) < 10) return 'just now';
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size)
      return format.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

/** "6 Dec 2026, 15:30": an exact time, short, in the reader's locale and time zone. */
export function formatExact(iso: string): string {
  return new Date(iso).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'short',
  });
}

/**
 * A relative time ("2 minutes ago") with the exact time on hover.
 *
 * @public
 */
export function RelativeTime(props: {
  value?: string | null;
  fallback?: string;
}) {
  if (!props.value) return <span>{props.fallback ?? 'never'}</span>;
  const exact = new Date(props.value).toLocaleString();
  return (
    <time dateTime={props.value} title={exact}>
      {formatRelative(props.value)}
    </time>
  );
}

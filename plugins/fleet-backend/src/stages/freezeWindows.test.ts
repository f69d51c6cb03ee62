import fc from 'fast-check';
import {
  freezeWindowIssues,
  FreezeWindows,
  type ClusterLabels,
  type FreezeWindowSpec,
} from './freezeWindows';

const CLUSTERS: ClusterLabels[] = [
  { name: 'prod-eu', labels: { env: 'prod', region: 'eu' } },
  { name: 'prod-us', labels: { env: 'prod', region: 'us' } },
  { name: 'stg', labels: { env: 'staging' } },
];

/** Friday 18:00 to Monday 10:00, Paris time, on the prod clusters. */
const WEEKEND: FreezeWindowSpec = {
  name: 'weekend',
  clusterSelector: 'env=prod',
  cron: '0 18 * * 5',
  duration: '64h',
  timeZone: 'Europe/Paris',
};

type Unit = 's' | 'm' | 'h';
const UNIT_MS: Record<Unit, number> = { s: 1_000, m: 60_000, h: 3_600_000 };

const at = (text: string) => new Date(text);
const before = (text: string) => new Date(Date.parse(text) - 1);

function windowAt(windows: FreezeWindows, name: string, now: Date) {
  const found = windows.list(CLUSTERS, now).find(w => w.name === name);
  if (!found) throw new Error(`no window ${name}`);
  return found;
}

describe('FreezeWindows, cron windows', () => {
  const windows = FreezeWindows.create([WEEKEND]);

  it('opens at 18:00 Paris time on Friday, and not a millisecond before', () => {
    // 23 October 2026: summer time (UTC+2).
    expect(windows.frozen(CLUSTERS, before('2026-10-23T16:00:00Z'))).toEqual(
      [],
    );
    expect(windows.frozen(CLUSTERS, at('2026-10-23T16:00:00Z'))).toEqual([
      {
        name: 'weekend',
        clusters: ['prod-eu', 'prod-us'],
        // 64 hours later: the clocks went back on Sunday, so 09:00 Paris time, not 10:00.
        closesAt: at('2026-10-26T08:00:00Z'),
      },
    ]);
  });

  it('closes 64 hours after it opened, across the change to winter time', () => {
    expect(
      windowAt(windows, 'weekend', before('2026-10-26T08:00:00Z')),
    ).toMatchObject({
      open: true,
      openedAt: '2026-10-23T16:00:00.000Z',
      closesAt: '2026-10-26T08:00:00.000Z',
      nextOpensAt: '2026-10-30T17:00:00.000Z',
    });
    expect(windows.frozen(CLUSTERS, at('2026-10-26T08:00:00Z'))).toEqual([]);
    expect(
      windowAt(windows, 'weekend', at('2026-10-26T08:00:00Z')),
    ).toMatchObject({
      open: false,
      openedAt: null,
      closesAt: null,
      // The next Friday 18:00 is in winter time (UTC+1).
      nextOpensAt: '2026-10-30T17:00:00.000Z',
    });
  });

  it('runs Friday 18:00 to Monday 10:00 Paris time in a week without a change', () => {
    expect(
      windowAt(windows, 'weekend', at('2026-11-01T12:00:00Z')),
    ).toMatchObject({
      open: true,
      openedAt: '2026-10-30T17:00:00.000Z',
      closesAt: '2026-11-02T09:00:00.000Z',
    });
  });

  it('opens at 18:00 winter time and closes at 11:00 summer time on the weekend of the change', () => {
    // Summer time starts on Sunday 28 March 2027.
    expect(
      windowAt(windows, 'weekend', at('2027-03-26T17:00:00Z')),
    ).toMatchObject({
      open: true,
      closesAt: '2027-03-29T09:00:00.000Z',
    });
    expect(
      windowAt(windows, 'weekend', before('2027-03-26T17:00:00Z')).open,
    ).toBe(false);
  });

  it('keeps a window open across openings that come before it closes', () => {
    const chained = FreezeWindows.create([
      {
        name: 'mornings',
        cron: '0 9,10 * * *',
        duration: '90m',
        timeZone: 'UTC',
      },
    ]);
    for (const now of ['2026-12-07T10:15:00Z', '2026-12-07T11:29:00Z']) {
      expect(windowAt(chained, 'mornings', at(now))).toMatchObject({
        open: true,
        closesAt: '2026-12-07T11:30:00.000Z',
        nextOpensAt: '2026-12-08T09:00:00.000Z',
      });
    }
    expect(windowAt(chained, 'mornings', at('2026-12-07T11:30:00Z')).open).toBe(
      false,
    );
  });

  it('keeps a window open when the next opening is exactly when it closes', () => {
    const backToBack = FreezeWindows.create([
      { name: 'hours', cron: '0 9,10 * * *', duration: '1h', timeZone: 'UTC' },
    ]);
    expect(
      backToBack.frozen(CLUSTERS, at('2026-12-07T09:30:00Z'))[0].closesAt,
    ).toEqual(at('2026-12-07T11:00:00Z'));
  });

  it('answers for a window that never closes', () => {
    const always = FreezeWindows.create([
      { name: 'always', cron: '* * * * *', duration: '1h', timeZone: 'UTC' },
    ]);
    const now = at('2026-12-07T10:00:30Z');
    const [frozen] = always.frozen(CLUSTERS, now);
    expect(frozen.clusters).toEqual(['prod-eu', 'prod-us', 'stg']);
    expect(frozen.closesAt.getTime()).toBeGreaterThan(
      now.getTime() + 3_600_000,
    );
  });
});

describe('FreezeWindows, start windows', () => {
  const START = '2026-12-24T18:00:00+01:00';
  const windows = FreezeWindows.create([
    { name: 'christmas', start: START, duration: '2d', timeZone: 'UTC' },
  ]);

  it('is open from its start, included, to its end, excluded', () => {
    expect(windows.frozen(CLUSTERS, before('2026-12-24T17:00:00Z'))).toEqual(
      [],
    );
    expect(windows.frozen(CLUSTERS, at('2026-12-24T17:00:00Z'))).toEqual([
      {
        name: 'christmas',
        clusters: ['prod-eu', 'prod-us', 'stg'],
        closesAt: at('2026-12-26T17:00:00Z'),
      },
    ]);
    expect(
      windows.frozen(CLUSTERS, before('2026-12-26T17:00:00Z')),
    ).toHaveLength(1);
    expect(windows.frozen(CLUSTERS, at('2026-12-26T17:00:00Z'))).toEqual([]);
  });

  it('opens next at its start before it, and never again once it opened', () => {
    expect(windowAt(windows, 'christmas', at('2026-12-01T00:00:00Z'))).toEqual({
      name: 'christmas',
      clusterSelector: null,
      cron: null,
      start: START,
      duration: '2d',
      timeZone: 'UTC',
      open: false,
      openedAt: null,
      closesAt: null,
      nextOpensAt: '2026-12-24T17:00:00.000Z',
      clusters: ['prod-eu', 'prod-us', 'stg'],
    });
    expect(
      windowAt(windows, 'christmas', at('2026-12-25T00:00:00Z')),
    ).toMatchObject({
      open: true,
      openedAt: '2026-12-24T17:00:00.000Z',
      nextOpensAt: null,
    });
    expect(
      windowAt(windows, 'christmas', at('2027-01-01T00:00:00Z')).nextOpensAt,
    ).toBeNull();
  });

  it('is open exactly for the instants from its start to its end (property)', () => {
    const base = Date.parse('2026-01-01T00:00:00Z');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 365 * 86_400_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.constantFrom<Unit>('s', 'm', 'h'),
        fc.integer({ min: -2 * 86_400_000, max: 2 * 86_400_000 }),
        (startOffset, amount, unit, offset) => {
          const start = base + startOffset;
          const ms = amount * UNIT_MS[unit];
          const t = start + (offset < 0 ? offset : offset % (ms + 2));
          const one = FreezeWindows.create([
            {
              name: 'w',
              start: new Date(start).toISOString(),
              duration: `${amount}${unit}`,
              timeZone: 'UTC',
            },
          ]);
          const frozen = one.frozen(CLUSTERS, new Date(t));
          expect(frozen.length === 1).toBe(start <= t && t < start + ms);
        },
      ),
    );
  });
});

describe('FreezeWindows, clusters and order', () => {
  const windows = FreezeWindows.create(
    [
      { ...WEEKEND, name: 'eu', clusterSelector: 'region in (eu)' },
      {
        name: 'staging-day',
        clusterSelector: 'env=staging',
        start: '2026-10-24T00:00:00Z',
        duration: '1d',
        timeZone: 'UTC',
      },
      {
        name: 'later',
        start: '2026-10-24T00:00:00Z',
        duration: '5d',
        timeZone: 'UTC',
      },
      {
        name: 'closed',
        start: '2027-06-01T00:00:00Z',
        duration: '1h',
        timeZone: 'UTC',
      },
    ],
    () => at('2026-10-24T12:00:00Z'),
  );

  it('names the windows that freeze one of the clusters, the latest to close first', () => {
    expect(windows.frozen(CLUSTERS)).toEqual([
      {
        name: 'later',
        clusters: ['prod-eu', 'prod-us', 'stg'],
        closesAt: at('2026-10-29T00:00:00Z'),
      },
      {
        name: 'eu',
        clusters: ['prod-eu'],
        closesAt: at('2026-10-26T08:00:00Z'),
      },
      {
        name: 'staging-day',
        clusters: ['stg'],
        closesAt: at('2026-10-25T00:00:00Z'),
      },
    ]);
    expect(
      windows
        .frozen([CLUSTERS[1]], at('2026-10-24T12:00:00Z'))
        .map(f => f.name),
    ).toEqual(['later']);
  });

  it('leaves out a window that selects none of the clusters', () => {
    const onlyStaging = windows.frozen([{ name: 'x', labels: {} }]);
    expect(onlyStaging.map(f => f.name)).toEqual(['later']);
    expect(windows.frozen([])).toEqual([]);
  });

  it('lists every window, open ones first, with the clusters it selects', () => {
    expect(
      windows.list(CLUSTERS).map(w => [w.name, w.open, w.clusters]),
    ).toEqual([
      ['eu', true, ['prod-eu']],
      ['staging-day', true, ['stg']],
      ['later', true, ['prod-eu', 'prod-us', 'stg']],
      ['closed', false, ['prod-eu', 'prod-us', 'stg']],
    ]);
  });
});

describe('freezeWindowIssues', () => {
  const good: FreezeWindowSpec = WEEKEND;
  const issuesOf = (...specs: FreezeWindowSpec[]) =>
    freezeWindowIssues(specs, at('2026-12-06T00:00:00Z')).map(
      i => `[${i.index}]${i.field ? `.${i.field}` : ''}: ${i.message}`,
    );

  it('accepts good windows', () => {
    expect(
      issuesOf(good, {
        name: 'once',
        start: '2026-12-24T18:00:00Z',
        duration: '30m',
        timeZone: 'UTC',
      }),
    ).toEqual([]);
  });

  it.each([
    [{ cron: undefined }, '[0]: needs cron or start'],
    [{ start: '2026-12-24T18:00:00Z' }, '[0]: give cron or start, not both'],
    [{ cron: '0 18 * *' }, "[0].cron: '0 18 * *' is not a 5-field cron"],
    [{ cron: '0 0 18 * * 5' }, '[0].cron: '],
    [{ cron: '0 25 * * 5' }, '[0].cron: '],
    [{ cron: 'a b c d e' }, '[0].cron: '],
    [{ cron: '0 0 30 2 *' }, '[0].cron: '],
    [{ timeZone: 'Europe/Pariss' }, "[0].timeZone: 'Europe/Pariss' is not"],
    [{ duration: '2 h' }, "[0].duration: '2 h' is not a positive duration"],
    [{ duration: '0m' }, '[0].duration: '],
    [{ duration: '1w' }, '[0].duration: '],
    [{ clusterSelector: 'env=prod,,' }, '[0].clusterSelector: '],
    [{ clusterSelector: '' }, '[0].clusterSelector: '],
    [{ name: ' ' }, '[0].name: must not be empty'],
  ] as Array<[Partial<FreezeWindowSpec>, string]>)(
    'refuses %j',
    (change, message) => {
      const issues = issuesOf({ ...good, ...change });
      expect(issues).toHaveLength(1);
      expect(issues[0].startsWith(message)).toBe(true);
    },
  );

  it.each([
    '2026-12-24',
    '2026-12-24T18:00:00',
    'tomorrow',
    '2026-13-24T18:00:00Z',
  ])('refuses the start %s', start => {
    expect(
      issuesOf({
        name: 'once',
        start,
        duration: '1h',
        timeZone: 'UTC',
      }),
    ).toEqual([
      `[0].start: '${start}' is not an ISO 8601 instant with its offset (e.g. 2026-12-24T18:00:00+01:00)`,
    ]);
  });

  it('refuses a name given twice, at the second window', () => {
    expect(issuesOf(good, { ...good, cron: '0 9 * * *' })).toEqual([
      "[1].name: 'weekend' is the name of window 0 already: names must be unique",
    ]);
  });

  it('makes create throw, naming the window and the field', () => {
    expect(() =>
      FreezeWindows.create([good, { ...good, name: 'x', duration: '' }]),
    ).toThrow("Invalid freeze window [1].duration: '' is not a positive");
  });
});

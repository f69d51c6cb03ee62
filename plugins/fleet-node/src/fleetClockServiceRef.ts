import {
  createServiceFactory,
  createServiceRef,
} from '@backstage/backend-plugin-api';

/**
 * The time Fleet's release rules read: when a stage's soak is over, and whether a freeze window
 * is open. A clock of its own, so that a test (or a rehearsal of a freeze calendar) can set the
 * time those rules see without waiting for it; every other time in Fleet (revision and event
 * timestamps, timeouts) stays the system's.
 *
 * @public
 */
export interface FleetClock {
  now(): Date;
}

/**
 * The clock of Fleet's release rules; by default the system clock. Replace it with a service
 * factory of your own to move the time those rules see.
 *
 * @public
 */
export const fleetClockServiceRef = createServiceRef<FleetClock>({
  id: 'fleet.clock',
  defaultFactory: async service =>
    createServiceFactory({
      service,
      deps: {},
      factory() {
        return { now: () => new Date() };
      },
    }),
});

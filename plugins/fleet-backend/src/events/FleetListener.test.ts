import { mockServices } from '@backstage/backend-test-utils';
import { FleetListeners, type CommittedEvent } from './FleetListener';

describe('FleetListeners', () => {
  const event: CommittedEvent = {
    subjectKind: 'cluster',
    subject: 'east',
    actor: 'fleet-health',
    from: 'ONLINE',
    to: 'OFFLINE',
    createdAt: new Date().toISOString(),
  };

  it('hands every listener what was committed, returns at once, and logs a listener’s failure instead of throwing it', async () => {
    const logger = mockServices.logger.mock();
    const heard: string[] = [];
    let release: () => void = () => undefined;
    const slow = new Promise<void>(resolve => {
      release = resolve;
    });
    const listeners = FleetListeners.create({ logger })
      .add({
        eventsCommitted: async () => {
          throw new Error('the notifications backend is down');
        },
      })
      .add({
        eventsCommitted: async events => {
          await slow;
          heard.push(...events.map(e => `${e.subject} ${e.to}`));
        },
      })
      .add({
        // A synchronous throw too.
        reconcileFinished: () => {
          throw new Error('boom');
        },
      });

    expect(() => listeners.eventsCommitted([event])).not.toThrow();
    expect(() =>
      listeners.reconcileFinished({ durationMs: 1, checked: 0, errors: 0 }),
    ).not.toThrow();
    // The writer went on; the slow listener has not finished yet.
    expect(heard).toEqual([]);
    release();
    await listeners.settled();
    expect(heard).toEqual(['east OFFLINE']);
    expect(logger.warn).toHaveBeenCalledWith(
      'A Fleet eventsCommitted listener failed',
      expect.objectContaining({ message: 'the notifications backend is down' }),
    );
    expect(logger.warn).toHaveBeenCalledWith(
      'A Fleet reconcileFinished listener failed',
      expect.objectContaining({ message: 'boom' }),
    );
  });

  it('calls nobody for an empty commit', async () => {
    const eventsCommitted = jest.fn();
    const listeners = FleetListeners.create({
      logger: mockServices.logger.mock(),
    }).add({ eventsCommitted });
    listeners.eventsCommitted([]);
    await listeners.settled();
    expect(eventsCommitted).not.toHaveBeenCalled();
  });
});

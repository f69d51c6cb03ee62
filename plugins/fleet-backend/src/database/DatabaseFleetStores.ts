import {
  DatabaseService,
  resolvePackagePath,
} from '@backstage/backend-plugin-api';
import type { Knex } from 'knex';
import { DatabaseApplicationStore } from './DatabaseApplicationStore';
import { DatabaseClusterStore } from './DatabaseClusterStore';
import { DatabaseDeploymentStore } from './DatabaseDeploymentStore';
import { DatabaseEventStore } from './DatabaseEventStore';
import { DatabaseFleetStateStore } from './DatabaseFleetStateStore';
import { DatabaseReleaseStore } from './DatabaseReleaseStore';
import { DatabaseRevisionStore } from './DatabaseRevisionStore';
import { EventLog, type EventsCommittedListener } from './eventLog';
import type { FleetStores } from './types';

const migrationsDir = resolvePackagePath(
  '@cnp/plugin-fleet-backend',
  'migrations',
);

/** Builds Fleet's stores over the plugin's database, migrated to the latest schema. */
export class DatabaseFleetStores {
  private constructor() {}

  static readonly migrationsDir = migrationsDir;

  static async create(options: {
    database: DatabaseService;
    /** Named prepared statements for hot reads on PostgreSQL (default true). */
    preparedStatements?: boolean;
    /** Hears every status event once its transaction committed, in this process. */
    onEventsCommitted?: EventsCommittedListener;
  }): Promise<FleetStores> {
    const client = await options.database.getClient();
    if (!options.database.migrations?.skip) {
      await client.migrate.latest({ directory: migrationsDir });
    }
    return DatabaseFleetStores.fromKnex(client, options);
  }

  /** For tests and tools that already hold a migrated knex. */
  static fromKnex(
    db: Knex,
    options: {
      preparedStatements?: boolean;
      onEventsCommitted?: EventsCommittedListener;
    } = {},
  ): FleetStores {
    const eventLog = EventLog.create(options.onEventsCommitted);
    return {
      clusters: DatabaseClusterStore.create(db, { eventLog }),
      applications: DatabaseApplicationStore.create(db),
      deployments: DatabaseDeploymentStore.create(db, {
        preparedStatements: options.preparedStatements,
        eventLog,
      }),
      revisions: DatabaseRevisionStore.create(db),
      releases: DatabaseReleaseStore.create(db, { eventLog }),
      events: DatabaseEventStore.create(db),
      state: DatabaseFleetStateStore.create(db),
    };
  }
}

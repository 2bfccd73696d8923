import type { DataSourceOptions } from 'typeorm';
import { DatabaseSettings, postgresOptions } from '@app/database';
import { InitialSchema1763856000000 } from './migrations/1763856000000-initial-schema';
import { AnalyticsRollups1764000000000 } from './migrations/1764000000000-analytics-rollups';
import { CommandPayloads1764200000001 } from './migrations/1764200000001-command-payloads';
import { ListSnapshotKeys1764200000002 } from './migrations/1764200000002-list-snapshot-keys';
import { OutboxWakeInProcess1764300000000 } from './migrations/1764300000000-outbox-wake-in-process';
import { ListFilterIndexes1764300000001 } from './migrations/1764300000001-list-filter-indexes';
import { ListCountIndex1764300000002 } from './migrations/1764300000002-list-count-index';
import { EventSequencesAndStore1764400000000 } from './migrations/1764400000000-event-sequences-and-store';
import { FirstResponsesPerRow1764500000000 } from './migrations/1764500000000-first-responses-per-row';
import { HotMessageAppends1764600000000 } from './migrations/1764600000000-hot-message-appends';
import { ConversationTags1765400000000 } from './migrations/1765400000000-conversation-tags';
import { ConversationSearch1765400000001 } from './migrations/1765400000001-conversation-search';
import { AnalyticsSlotUpsert1766600000000 } from './migrations/1766600000000-analytics-slot-upsert';
import { ConversationErasure1766300000000 } from './migrations/1766300000000-conversation-erasure';
import { MessageSearchIndex1766700000000 } from './migrations/1766700000000-message-search-index';
import { SearchFunctionsPlpgsql1767000000000 } from './migrations/1767000000000-search-functions-plpgsql';

export const CONVERSATIONS_SCHEMA = 'conversations';

export function conversationsDataSourceOptions(config: DatabaseSettings): DataSourceOptions {
  return {
    ...postgresOptions(config, 'conversations'),
    schema: CONVERSATIONS_SCHEMA,
    migrationsTableName: 'migrations',
    // No entities: every query is SQL through libs/database's typed statements; TypeORM runs the
    // migrations, the connections and the transactions.
    entities: [],
    migrations: [
      InitialSchema1763856000000,
      AnalyticsRollups1764000000000,
      CommandPayloads1764200000001,
      ListSnapshotKeys1764200000002,
      OutboxWakeInProcess1764300000000,
      ListFilterIndexes1764300000001,
      ListCountIndex1764300000002,
      EventSequencesAndStore1764400000000,
      FirstResponsesPerRow1764500000000,
      HotMessageAppends1764600000000,
      ConversationTags1765400000000,
      ConversationSearch1765400000001,
      AnalyticsSlotUpsert1766600000000,
      ConversationErasure1766300000000,
      MessageSearchIndex1766700000000,
      SearchFunctionsPlpgsql1767000000000,
    ],
  } as DataSourceOptions;
}

import type { FactoryProvider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SnapshotSealer } from '@app/contracts';
import { query } from '@app/database';

/** The sealer of list snapshot tokens, with the keys of the service's schema (read once at start). */
export const listSnapshotSealer: FactoryProvider<SnapshotSealer> = {
  provide: SnapshotSealer,
  inject: [DataSource],
  useFactory: async (db: DataSource) => {
    const { rows } = await query<{ id: number; key: Buffer }>(
      db,
      `SELECT id, key FROM conversations.list_snapshot_keys`,
    );
    return new SnapshotSealer(new Map(rows.map((row) => [row.id, row.key])));
  },
};

import { alteredMigrations, migrationChecksums, recordedChecksums } from './migration-checksums';

/** Landed migrations are never edited (a database that ran one never runs it again): migrations.lock.json holds each one's checksum. */
describe('migrations', () => {
  it('every landed migration is exactly as it landed', () => {
    expect(alteredMigrations()).toEqual([]);
  });

  it('every migration is recorded (npm run migrations:lock records a new one)', () => {
    expect(Object.keys(migrationChecksums()).filter((file) => !(file in recordedChecksums()))).toEqual([]);
  });

  it('an edited or removed migration is reported', () => {
    const recorded = { 'a.ts': 'x', 'b.ts': 'y', 'c.ts': 'z' };
    expect(alteredMigrations({ 'a.ts': 'x', 'b.ts': 'changed' }, recorded)).toEqual([
      'b.ts (edited)',
      'c.ts (removed)',
    ]);
  });
});

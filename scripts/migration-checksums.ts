import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A landed migration is never edited (a database that ran it would never run the edit): each
 * migration file's SHA-256 is recorded in migrations.lock.json when it lands, and a test fails
 * when a recorded file changes or disappears. `npm run migrations:lock` records new migrations
 * and refuses to touch recorded ones.
 */
const ROOT = path.resolve(__dirname, '..');
export const LOCK_FILE = path.join(ROOT, 'migrations.lock.json');

/** Every migration of every service: repository-relative path -> SHA-256 of its content. */
export function migrationChecksums(): Record<string, string> {
  const services = readdirSync(path.join(ROOT, 'services'));
  const files = services.flatMap((service) => {
    const dir = path.join('services', service, 'src', 'migrations');
    return existsSync(path.join(ROOT, dir))
      ? readdirSync(path.join(ROOT, dir))
          .filter((name) => name.endsWith('.ts'))
          .map((name) => path.posix.join(dir, name))
      : [];
  });
  return Object.fromEntries(
    files.sort().map((file) => [
      file,
      createHash('sha256')
        .update(readFileSync(path.join(ROOT, file)))
        .digest('hex'),
    ]),
  );
}

export function recordedChecksums(): Record<string, string> {
  return existsSync(LOCK_FILE) ? (JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as Record<string, string>) : {};
}

/** Recorded migrations that changed or are gone. */
export function alteredMigrations(current = migrationChecksums(), recorded = recordedChecksums()): string[] {
  return Object.entries(recorded)
    .filter(([file, sum]) => current[file] !== sum)
    .map(([file]) => (current[file] === undefined ? `${file} (removed)` : `${file} (edited)`));
}

if (require.main === module) {
  const altered = alteredMigrations();
  if (altered.length > 0) {
    process.stderr.write(
      `landed migrations changed; add a new migration instead:\n  ${altered.join('\n  ')}\n`,
    );
    process.exit(1);
  }
  const current = migrationChecksums();
  writeFileSync(LOCK_FILE, `${JSON.stringify({ ...recordedChecksums(), ...current }, null, 2)}\n`);
  process.stdout.write(`${Object.keys(current).length} migrations recorded in migrations.lock.json\n`);
}

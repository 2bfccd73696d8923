import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The one command that installs what `npm test` needs on Debian or Ubuntu (README, "Prerequisites"). */
export const INSTALL_EVERYTHING =
  'sudo apt-get install postgresql redis-server rabbitmq-server chromium curl jq';

/** Whether `command` (a name looked up on PATH, or a path) is an executable file. */
export function isExecutable(command: string): boolean {
  const candidates = command.includes('/')
    ? [command]
    : (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, command));
  return candidates.some((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Fails with a message naming what is missing, who needs it and how to install it, instead of
 * the spawn error (ENOENT) or time-out a missing tool would otherwise cause deep in a test.
 */
export function requireExecutable(command: string, neededBy: string, install: string): void {
  if (isExecutable(command)) return;
  throw new Error(
    `${neededBy} needs \`${command}\`, which is not installed here: ${install}. ` +
      `Everything npm test needs at once: \`${INSTALL_EVERYTHING}\` (README.md, "Prerequisites").`,
  );
}

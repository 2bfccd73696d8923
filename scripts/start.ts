import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/**
 * `npm start`: runs every service as a child process, in this order, with this process's
 * environment and stdio (services log JSON lines on stderr).
 *
 * Nothing is checked here: each service checks its own dependencies and exits at once, naming the
 * unreachable one and the command that starts it. SIGTERM or SIGINT stops every service gracefully
 * and exits 0 if they all stopped cleanly. A service that exits on its own stops the others, and
 * this process then exits 1.
 */
const SERVICES = ['conversations', 'gateway'] as const;
const DIST = path.resolve(__dirname, '..');

const running = new Map<string, ChildProcess>();
let stopping = false;
let failed = false;

function log(message: string): void {
  process.stderr.write(`start: ${message}\n`);
}

/** Asks every running service to shut down gracefully; called once, later calls do nothing. */
function stopAll(): void {
  if (stopping) return;
  stopping = true;
  // Always SIGTERM: on Ctrl-C the terminal has already sent SIGINT to the whole process group,
  // and each service handles one SIGINT and one SIGTERM (a second of the same kind kills it).
  for (const child of running.values()) child.kill('SIGTERM');
}

/** Starts one service; resolves when it has exited. */
function start(name: string): Promise<void> {
  const child = spawn(process.execPath, [path.join(DIST, 'services', name, 'src', 'main.js')], {
    stdio: 'inherit',
  });
  running.set(name, child);
  return new Promise((resolve) => {
    const exited = (outcome: string, clean: boolean) => {
      if (!running.delete(name)) return; // 'error' and 'exit' may both fire
      if (!stopping || !clean) {
        failed = true;
        log(`${name} ${outcome}${stopping ? '' : '; stopping the other services'}`);
      }
      stopAll();
      resolve();
    };
    child.once('error', (error) => exited(`could not be started: ${error.message}`, false));
    // Dying of the SIGTERM we sent (before its shutdown handler was installed) is a clean stop.
    child.once('exit', (code, signal) =>
      exited(
        signal ? `was killed by ${signal}` : `exited with code ${code}`,
        code === 0 || (stopping && signal === 'SIGTERM'),
      ),
    );
  });
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (!stopping) log(`${signal} received; stopping the services`);
    stopAll();
  });
}

void Promise.all(SERVICES.map(start)).then(() => {
  process.exitCode = failed ? 1 : 0;
});

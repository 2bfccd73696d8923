import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { Replica, ServiceName } from './replicas';

/** The repository root when run from source, `dist/` when built. */
const ROOT = path.resolve(__dirname, '..');
/** Run from TypeScript (tests), services are compiled on the fly too; built, they run from dist. */
const FROM_SOURCE = __filename.endsWith('.ts');

function serviceCommand(service: ServiceName): string[] {
  const main = path.join(ROOT, 'services', service, 'src', FROM_SOURCE ? 'main.ts' : 'main.js');
  return FROM_SOURCE ? ['-r', '@swc-node/register', main] : [main];
}

/**
 * Runs every replica as a child process with this process's environment (plus its own port) and
 * stdio (services log JSON lines on stderr); resolves with the exit code for this process.
 *
 * Nothing is checked here: each service checks its own dependencies and exits at once, naming the
 * unreachable one and the command that starts it. `stop()` (SIGTERM or SIGINT here) stops every
 * replica gracefully; the result is 0 if they all stopped cleanly. A replica that crashes (exits
 * non-zero or dies of a signal) stops the others and the result is 1. A replica that exits with 0
 * on its own was stopped on purpose (an operator sent it SIGTERM to take it out): the others keep
 * running.
 */
export class Supervisor {
  private readonly running = new Map<string, ChildProcess>();
  private stopping = false;
  private failed = false;

  constructor(
    private readonly replicas: Replica[],
    private readonly log: (line: string) => void = (line) => process.stderr.write(`start: ${line}\n`),
  ) {}

  run(): Promise<number> {
    return Promise.all(this.replicas.map((replica) => this.start(replica))).then(() => (this.failed ? 1 : 0));
  }

  /** Asks every running replica to shut down gracefully; later calls do nothing. */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    // Always SIGTERM: on Ctrl-C the terminal has already sent SIGINT to the whole process group,
    // and each service handles one SIGINT and one SIGTERM (a second of the same kind kills it).
    for (const child of this.running.values()) child.kill('SIGTERM');
  }

  /** Starts one replica; resolves when it has exited. */
  private start(replica: Replica): Promise<void> {
    const child = spawn(process.execPath, serviceCommand(replica.service), {
      cwd: ROOT,
      env: { ...process.env, ...replica.env },
      stdio: 'inherit',
    });
    this.running.set(replica.name, child);
    const settings = Object.entries(replica.env).map(([name, value]) => `${name}=${value}`);
    this.log(`${replica.name} started (pid ${child.pid}, ${settings.join(', ')})`);
    return new Promise((resolve) => {
      const exited = (outcome: string, clean: boolean) => {
        if (!this.running.delete(replica.name)) return; // 'error' and 'exit' may both fire
        const crashed = !clean;
        if (crashed) this.failed = true;
        const consequence = crashed && !this.stopping ? '; stopping the other replicas' : '';
        this.log(`${replica.name} ${outcome}${consequence}`);
        if (crashed) this.stop();
        resolve();
      };
      child.once('error', (error) => exited(`could not be started: ${error.message}`, false));
      // Dying of the SIGTERM we sent (before its shutdown handler was installed) is a clean stop.
      child.once('exit', (code, signal) =>
        exited(
          signal ? `was killed by ${signal}` : `exited with code ${code}`,
          code === 0 || (this.stopping && signal === 'SIGTERM'),
        ),
      );
    });
  }
}

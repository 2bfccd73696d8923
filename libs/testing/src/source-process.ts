import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * Runs a TypeScript entry point of this repository (a path from its root) as a real process,
 * compiled on the fly by @swc-node/register, listening on 127.0.0.1 and logging at info, with the
 * run's database, vhost and Redis prefix from this process's environment; `env` overrides.
 */
export function spawnFromSource(entry: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawnIn(ROOT, ['-r', '@swc-node/register', path.join(ROOT, entry), ...args], env);
}

/** The same for a compiled entry point (`dist/...js`) of another tree, a release's checkout. */
export function spawnBuilt(root: string, entry: string, env: Record<string, string>): ChildProcess {
  return spawnIn(root, [path.join(root, entry)], env);
}

function spawnIn(cwd: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', OPS_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The last `maxChars` characters a process wrote, stdout and stderr interleaved. */
export class OutputTail {
  private output = '';

  constructor(child: ChildProcess, maxChars: number) {
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-maxChars);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
  }

  get text(): string {
    return this.output;
  }
}

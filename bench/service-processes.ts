import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';

const DIST = path.resolve(__dirname, '..');

/** The built services as child processes, as `npm start` runs them. */
export class ServiceProcesses {
  private readonly children: ChildProcess[] = [];

  start(service: 'gateway' | 'conversations' | 'webhooks', env: Record<string, string>): ChildProcess {
    // BENCH_PROFILE_DIR=/tmp/prof writes a V8 CPU profile per service on exit (open in Chrome DevTools).
    const profile = process.env.BENCH_PROFILE_DIR
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
      : [];
    // BENCH_TRACE_DIR: each service's garbage collections (--trace-gc, times from its start) in
    // <service>-<n>-<epoch ms at spawn>.gc.log, for bench/latency-windows.ts.
    const traceDir = process.env.BENCH_TRACE_DIR;
    const gcLog = traceDir
      ? openSync(path.join(traceDir, `${service}-${this.children.length}-${Date.now()}.gc.log`), 'w')
      : 'ignore';
    const child = spawn(
      process.execPath,
      [
        ...profile,
        ...(traceDir ? ['--trace-gc'] : []),
        path.join(DIST, 'services', service, 'src', 'main.js'),
      ],
      {
        env: { ...process.env, ...env },
        stdio: ['ignore', gcLog, 'pipe'],
      },
    );
    if (typeof gcLog === 'number') closeSync(gcLog);
    let tail = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000);
    });
    child.once('exit', (code) => {
      if (code !== 0 && code !== null) process.stderr.write(`${service} exited with ${code}:\n${tail}\n`);
    });
    this.children.push(child);
    return child;
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      this.children.map(async (child) => {
        if (child.exitCode !== null) return;
        child.kill('SIGTERM');
        await once(child, 'exit');
      }),
    );
    this.children.length = 0;
  }
}

/** Up to 2 minutes: a start takes over 30 s on a shared 2-core machine at load 30. */
export async function waitForReady(url: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(`${url}/health/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not become ready within ${timeoutMs} ms`);
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually } from './eventually';
import type { TcpProxy } from './tcp-proxy';

/** The release the repository's package.json names, which every running service must report. */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as { version: string }
).version;

/** Terminus's readiness body. */
export interface ReadinessBody {
  status: 'ok' | 'error' | 'shutting_down';
  info: Record<string, { status: string; [detail: string]: unknown }>;
  error: Record<string, { status: string; [detail: string]: unknown }>;
  details: Record<string, { status: string; [detail: string]: unknown }>;
}

/** Polls `<baseUrl>/health/ready` until it answers `status` (a dependency takes a moment to drop or come back). */
export function readinessAnswering(
  baseUrl: string,
  status: 200 | 503,
  timeoutMs = 20_000,
): Promise<ReadinessBody> {
  return eventually(
    async () => {
      const response = await fetch(`${baseUrl}/health/ready`);
      const body = (await response.json()) as ReadinessBody;
      expect({ status: response.status, body }).toMatchObject({ status });
      return body;
    },
    timeoutMs,
    100,
  );
}

/** Ready: 200, and each named check is up. */
export async function expectReady(baseUrl: string, checks: string[]): Promise<ReadinessBody> {
  const body = await readinessAnswering(baseUrl, 200);
  expect(body.status).toBe('ok');
  expect(body.error).toEqual({});
  for (const check of checks) expect({ check, ...body.info[check] }).toMatchObject({ check, status: 'up' });
  return body;
}

/** Not ready: 503 naming `down` as down (with the reason), the others as up. */
export async function expectNotReady(baseUrl: string, down: string, up: string[]): Promise<ReadinessBody> {
  const body = await readinessAnswering(baseUrl, 503);
  expect(body.status).toBe('error');
  expect(body.error[down]).toEqual({ status: 'down', message: expect.any(String) });
  for (const check of up) expect({ check, ...body.info[check] }).toMatchObject({ check, status: 'up' });
  return body;
}

/** GET /health/live: 200 `{status: ok, version}`, the version package.json names. */
export async function expectLive(baseUrl: string): Promise<void> {
  const response = await fetch(`${baseUrl}/health/live`);
  expect({ status: response.status, body: await response.json() }).toEqual({
    status: 200,
    body: { status: 'ok', version: PACKAGE_VERSION },
  });
}

/**
 * Makes a dependency unreachable through its proxy: readiness answers 503 naming it (the other
 * checks up) while liveness stays 200; once it is back, readiness answers 200 again.
 */
export async function expectReadinessFollowsOutage(
  baseUrl: string,
  proxy: TcpProxy,
  down: string,
  checks: string[],
): Promise<void> {
  await proxy.cut();
  try {
    await expectNotReady(
      baseUrl,
      down,
      checks.filter((check) => check !== down),
    );
    await expectLive(baseUrl);
  } finally {
    await proxy.restore();
  }
  await expectReady(baseUrl, checks);
}

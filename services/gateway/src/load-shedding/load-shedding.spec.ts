import Fastify, { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { LoadShedder } from './load-shedding';

/**
 * The shedder in a bare Fastify server on 127.0.0.1 (real HTTP): past a bound, new requests are
 * 503 `overloaded` with Retry-After at once; health and metrics never are; requests in flight
 * are counted down when answered, so admission resumes.
 */
describe('LoadShedder', () => {
  let server: FastifyInstance;
  let shedder: LoadShedder;
  let url: string;
  let registry: Registry;
  const release: Array<() => void> = [];

  async function start(bounds: { maxInFlight: number; maxEventLoopDelayMs: number }): Promise<void> {
    server = Fastify();
    registry = new Registry();
    shedder = new LoadShedder(bounds, registry);
    shedder.register(server);
    server.get('/v1/slow', () => new Promise((resolve) => release.push(() => resolve({ ok: true }))));
    server.get('/v1/fast', async () => ({ ok: true }));
    server.get('/health/live', async () => ({ status: 'ok' }));
    url = await server.listen({ port: 0, host: '127.0.0.1' });
  }

  afterEach(async () => {
    release.splice(0).forEach((answer) => answer());
    shedder?.close();
    await server?.close();
  });

  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('refuses new requests at maxInFlight with 503 overloaded and Retry-After, and admits again once some finish', async () => {
    await start({ maxInFlight: 3, maxEventLoopDelayMs: 0 });
    const held = Array.from({ length: 3 }, () => fetch(`${url}/v1/slow`));
    await until(() => release.length === 3);

    const refused = await fetch(`${url}/v1/fast`);
    expect({ status: refused.status, retryAfter: refused.headers.get('retry-after') }).toEqual({
      status: 503,
      retryAfter: '1',
    });
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ status: 503, code: 'overloaded' });
    expect((await fetch(`${url}/health/live`)).status).toBe(200);

    release.splice(0).forEach((answer) => answer());
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await fetch(`${url}/v1/fast`)).status).toBe(200);
  });

  it('counts a request whose client went away as finished', async () => {
    await start({ maxInFlight: 1, maxEventLoopDelayMs: 0 });
    const abort = new AbortController();
    const gone = fetch(`${url}/v1/slow`, { signal: abort.signal }).catch(() => undefined);
    await until(() => release.length === 1);
    expect((await fetch(`${url}/v1/fast`)).status).toBe(503);
    abort.abort();
    await gone;
    await until(() => shedder.reasonToShed() === undefined);
    expect((await fetch(`${url}/v1/fast`)).status).toBe(200);
  });

  it('refuses new requests while the event loop is delayed past maxEventLoopDelayMs, and admits again once it is not', async () => {
    await start({ maxInFlight: 0, maxEventLoopDelayMs: 50 });
    expect((await fetch(`${url}/v1/fast`)).status).toBe(200);
    // Every turn of the loop takes 80 ms for more than a measuring window, as when the process
    // has no CPU left (one long pause alone is not overload, and is not shed on).
    const saturatedUntil = Date.now() + 700;
    while (Date.now() < saturatedUntil) {
      const turnEnds = Date.now() + 80;
      while (Date.now() < turnEnds);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(shedder.reasonToShed()).toBe('event_loop_delay');
    const refused = await fetch(`${url}/v1/fast`);
    expect(refused.status).toBe(503);
    expect((await fetch(`${url}/health/live`)).status).toBe(200);
    // Once the loop is free again, so is admission.
    await until(() => shedder.reasonToShed() === undefined);
    expect((await fetch(`${url}/v1/fast`)).status).toBe(200);
  });

  it('caps its limit while requests are answered later than the objective, and lifts the cap once none is in flight', async () => {
    await start({ maxInFlight: 64, maxEventLoopDelayMs: 0 });
    const limit = async () =>
      (await registry.getSingleMetric('cms_http_requests_in_flight_limit')!.get()).values[0].value;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const late = Array.from({ length: 40 }, () => fetch(`${url}/v1/slow`));
    await until(() => release.length === 40);
    await sleep(350);
    // 20 answered after 350 ms, 20 more after 470: a window of answers past the objective closes.
    release.splice(0, 20).forEach((answer) => answer());
    await sleep(120);
    release.splice(0, 1).forEach((answer) => answer());
    await until(() => release.length === 19);
    await sleep(20);
    expect(await limit()).toBeLessThan(40);

    release.splice(0).forEach((answer) => answer());
    expect((await Promise.all(late)).every((response) => response.status === 200)).toBe(true);
    await until(() => shedder.reasonToShed() === undefined);
    expect(await limit()).toBe(64);
    const burst = await Promise.all(Array.from({ length: 40 }, () => fetch(`${url}/v1/fast`)));
    expect(burst.map((response) => response.status)).toEqual(Array(40).fill(200));
  });
});

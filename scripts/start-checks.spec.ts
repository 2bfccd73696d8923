import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { planReplicas } from './replicas';
import { announceGatewaysWhenReady, portsTaken } from './start-checks';

/** `npm start`'s checks around the replicas it runs, against real sockets on 127.0.0.1. */
describe('start checks', () => {
  let server: http.Server;
  let port: number;
  let live = false;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      response.writeHead(request.url === '/health/live' && live ? 200 : 503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const replicas = () =>
    planReplicas({ gateway: 1, conversations: 1, webhooks: 1 }, { PORT: String(port), OPS_PORT: '0' });

  it('names a port already taken, who holds it and what to set, before anything starts', async () => {
    expect(await portsTaken(replicas())).toEqual([
      expect.stringMatching(
        new RegExp(
          `^gateway#0: port ${port} is already in use by process ${process.pid} .*set PORT to a free port\\.$`,
        ),
      ),
    ]);
  });

  it('finds nothing taken on free ports', async () => {
    expect(
      await portsTaken(
        planReplicas({ gateway: 1, conversations: 1, webhooks: 1 }, { PORT: '0', OPS_PORT: '0' }),
      ),
    ).toEqual([]);
  });

  it('says where the API and its reference are once the gateway is live', async () => {
    const lines: string[] = [];
    setTimeout(() => (live = true), 300);
    await announceGatewaysWhenReady(
      replicas(),
      (line) => lines.push(line),
      () => false,
      { intervalMs: 50 },
    );
    expect(lines).toEqual([
      `gateway#0 ready: API http://127.0.0.1:${port}/v1, reference and "Try it out" at http://127.0.0.1:${port}/docs`,
    ]);
  });

  it('gives up without a word when the services stopped', async () => {
    live = false;
    const lines: string[] = [];
    await announceGatewaysWhenReady(
      replicas(),
      (line) => lines.push(line),
      () => true,
    );
    expect(lines).toEqual([]);
  });
});

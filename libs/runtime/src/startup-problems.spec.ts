import net from 'node:net';
import { explainStartupFailure, processListeningOn } from './startup-problems';

describe('explainStartupFailure', () => {
  let server: net.Server;
  let port: number;

  beforeAll(async () => {
    server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('finds the process listening on a port (this one)', () => {
    expect(processListeningOn(port)).toEqual({ pid: process.pid, command: expect.stringContaining('node') });
  });

  it('names the variable to change and the process holding a port in use', () => {
    const inUse = Object.assign(new Error(`listen EADDRINUSE: address already in use 0.0.0.0:${port}`), {
      code: 'EADDRINUSE',
      port,
    });
    const hint = explainStartupFailure(inUse, { ports: { OPS_PORT: port } });
    expect(hint).toContain(`port ${port} is already in use by process ${process.pid}`);
    expect(hint).toContain('set OPS_PORT to a free port');
  });

  it('gives the command that creates a missing database', () => {
    const missing = Object.assign(new Error('database "cms_dev" does not exist'), { code: '3D000' });
    expect(
      explainStartupFailure(missing, { ports: {}, databaseUrl: 'postgres://postgres@db.local:5433/cms_dev' }),
    ).toBe(
      'database "cms_dev" does not exist on db.local:5433: create it with ' +
        '`createdb -h db.local -p 5433 -U postgres cms_dev`, or set DATABASE_URL to one that exists.',
    );
  });

  it('leaves other errors alone', () => {
    expect(explainStartupFailure(new Error('boom'), { ports: { PORT: 3000 } })).toBeUndefined();
  });
});

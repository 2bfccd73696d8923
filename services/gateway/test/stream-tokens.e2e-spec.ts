import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Browser, chromium } from 'playwright-core';
import { eventually, expectProblem, requireExecutable, TestAccount, TestStack } from '@app/testing';

/**
 * Streams in a browser (docs/events.md, "Streams in a browser"): a server asks for a stream token
 * with its API key, and a page on an allowed origin, in a real Chromium, opens
 * `new EventSource(stream?token=...)` with no Authorization header and receives an event. The
 * token opens that stream and nothing else. Needs Chromium as the API reference's browser test
 * does (README.md, "Prerequisites"; or CHROMIUM_PATH).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The page: opens the stream with the token from its own URL and keeps what arrives. */
const PAGE = `<!doctype html><html><body><script>
  const params = new URLSearchParams(location.search);
  const source = new EventSource(params.get('api') + '/v1/events/stream?token=' + params.get('token'));
  window.received = [];
  source.onopen = () => (window.opened = true);
  source.addEventListener('conversation.started', (event) => window.received.push(JSON.parse(event.data)));
</script></body></html>`;

describe('stream tokens', () => {
  let pages: Server;
  let origin: string;
  let stack: TestStack;
  let browser: Browser;
  let account: TestAccount;

  beforeAll(async () => {
    requireExecutable(
      CHROMIUM,
      'The browser test of stream tokens',
      'install it with `sudo apt-get install chromium`, or set CHROMIUM_PATH to a Chromium or Chrome binary',
    );
    pages = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE),
    );
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    stack = await TestStack.start({ gateway: { CORS_ORIGINS: origin } });
    account = await stack.createAccount();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    if (pages) await new Promise((resolve) => pages.close(resolve));
  });

  const newToken = async () => {
    const issued = await account.api.post('/v1/events/stream-tokens');
    expect(issued.status).toBe(201);
    return issued.body as { token: string; expires_at: string };
  };

  it('is issued for 5 minutes to an API key', async () => {
    const before = Date.now();
    const { token, expires_at } = await newToken();
    expect(token).toMatch(/^st_[\w-]{43}$/);
    const ttl = Date.parse(expires_at) - before;
    expect(ttl).toBeGreaterThan(299_000);
    expect(ttl).toBeLessThan(301_000 + 5_000);
  });

  it('lets a page on an allowed origin open EventSource without a key and receive an event', async () => {
    const { token } = await newToken();
    const page = await browser.newPage();
    try {
      const url = `${origin}/?api=${encodeURIComponent(stack.url)}&token=${encodeURIComponent(token)}`;
      await page.goto(url);
      await page.waitForFunction(() => (globalThis as any).opened === true, undefined, { timeout: 30_000 });
      const created = await account.api.post('/v1/conversations', { subject: 'From the browser test' });
      expect(created.status).toBe(201);
      await page.waitForFunction(() => (globalThis as any).received.length > 0, undefined, {
        timeout: 30_000,
      });
      const [event] = (await page.evaluate(() => (globalThis as any).received)) as any[];
      expect(event).toMatchObject({
        type: 'conversation.started',
        conversation_id: created.body.id,
        data: { conversation: { id: created.body.id, subject: 'From the browser test' } },
      });
    } finally {
      await page.close();
    }
  });

  it('authenticates nothing but the stream, and an unknown token nothing at all', async () => {
    const { token } = await newToken();
    const anonymous = stack.api();
    expectProblem(await anonymous.get(`/v1/conversations?token=${token}`), 401, 'unauthorized');
    expectProblem(await anonymous.get(`/v1/events?token=${token}`), 401, 'unauthorized');
    expectProblem(await stack.api(token).get('/v1/events/stream'), 401, 'unauthorized');
    expectProblem(await anonymous.get('/v1/events/stream?token=st_unknown'), 401, 'unauthorized');
    expectProblem(await anonymous.post('/v1/events/stream-tokens'), 401, 'unauthorized');
  });

  it('stops opening streams once its key is revoked', async () => {
    const other = await stack.createAccount();
    const issued = await other.api.post('/v1/events/stream-tokens');
    await stack.accountsRepository().revokeKey(other.keyId);
    // Within the key cache's time (AUTH_CACHE_TTL_MS), as for the key itself.
    const res = await eventually(async () => {
      const answer = await stack.api().get(`/v1/events/stream?token=${issued.body.token}`);
      if (answer.status !== 401) throw new Error(`still ${answer.status}`);
      return answer;
    }, 15_000);
    expectProblem(res, 401, 'unauthorized');
  });
});

import { Browser, chromium, Locator, Page } from 'playwright-core';
import { createAccountWithCli, requireExecutable, TestStack } from '@app/testing';

/**
 * The API reference at /docs in a real browser (Debian's Chromium, driven by playwright-core), as
 * a new user tries it: authorize with an API key, then "Try it out" on the list with
 * changed parameters, a create, a get of what it created and a Polish operation, each answered
 * 2xx with the data shown. It needs Chromium at /usr/bin/chromium (README.md, "Prerequisites"), or
 * CHROMIUM_PATH naming a Chromium or Chrome binary.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('/docs in a browser: Try it out', () => {
  let stack: TestStack;
  let browser: Browser;
  let page: Page;
  let transferredBytes = 0;

  beforeAll(async () => {
    requireExecutable(
      CHROMIUM,
      'The browser test of /docs',
      'install it with `sudo apt-get install chromium`, or set CHROMIUM_PATH to a Chromium or Chrome binary',
    );
    stack = await TestStack.start();
    const { apiKey } = await createAccountWithCli('api reference');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('requestfinished', (request) => {
      void request.sizes().then((sizes) => (transferredBytes += sizes.responseBodySize));
    });
    await page.goto(`${stack.url}/docs`);
    await page.waitForSelector('.opblock');
    await page.click('button.authorize');
    await page.fill('.auth-container input', apiKey);
    await page.click('.auth-btn-wrapper button.authorize');
    await page.click('.auth-btn-wrapper button.btn-done');
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  /** Expands an operation and presses "Try it out". */
  async function tryOut(operationId: string): Promise<Locator> {
    const operation = page.locator(`.opblock[id$="-${operationId}"]`);
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('button.try-out__btn').click();
    return operation;
  }

  /** Presses Execute and reads the status and body Swagger UI shows. */
  async function execute(operation: Locator): Promise<{ status: number; body: any }> {
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    const body = await operation
      .locator('.live-responses-table .response-col_description pre.microlight')
      .first()
      .innerText();
    return { status: Number((await status.innerText()).trim()), body: JSON.parse(body) };
  }

  const param = (operation: Locator, name: string) =>
    operation.locator(`tr[data-param-name="${name}"] input`).first();

  let createdId: string;

  it('creates a conversation from the example body', async () => {
    const operation = await tryOut('createConversation');
    const { status, body } = await execute(operation);
    expect(status).toBe(201);
    expect(body).toMatchObject({ status: expect.any(String), message_count: expect.any(Number) });
    createdId = body.id;
  });

  it('lists with changed parameters (limit and status), which used to conflict with alias defaults', async () => {
    const operation = await tryOut('listConversations');
    await param(operation, 'limit').fill('5');
    await param(operation, 'status').fill('active');
    const { status, body } = await execute(operation);
    expect(status).toBe(200);
    expect(body.pagination).toMatchObject({ limit: 5, offset: 0 });
    expect(body.data.every((conversation: { status: string }) => conversation.status === 'active')).toBe(
      true,
    );
    expect(body.data.map((conversation: { id: string }) => conversation.id)).toContain(createdId);
  });

  it('gets the created conversation by id, in English (no Accept-Language pre-filled)', async () => {
    const operation = await tryOut('getConversation');
    await param(operation, 'id').fill(createdId);
    const { status, body } = await execute(operation);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: createdId, status: 'active', messages: expect.any(Array) });
  });

  it("runs a Polish operation; the browser's own Accept-Language (en-US) chooses English over the path", async () => {
    const operation = await tryOut('getConversationPl');
    await param(operation, 'id').fill(createdId);
    const { status, body } = await execute(operation);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: createdId, status: 'active' });
  });

  it('the page stays light: under 1 MB transferred for the page and its assets', () => {
    console.log(
      `/docs transferred ${(transferredBytes / 1024).toFixed(0)} KiB (page, assets, OpenAPI, API calls)`,
    );
    expect(transferredBytes).toBeGreaterThan(0);
    expect(transferredBytes).toBeLessThan(1024 * 1024);
  });
});

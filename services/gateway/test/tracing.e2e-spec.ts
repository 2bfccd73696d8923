import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ConversationRpc } from '@app/contracts';
import {
  ApiClient,
  createAccountWithCli,
  eventually,
  OtlpReceiver,
  type ReceivedSpan,
  ServiceProcess,
  WebhookReceiver,
} from '@app/testing';

/**
 * Tracing (docs/operations.md "Tracing"): the three services as real processes export their spans
 * to an OTLP/HTTP receiver in this process. One request's trace, continued from the caller's
 * `traceparent`, reaches the webhook: every span has the parent it should, the CloudEvent carries
 * the command's context, and the webhook request a `traceparent` of the same trace.
 */

const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 };
/** Three processes compiling their sources at once on a loaded machine. */
const STARTUP_MS = 90_000;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('tracing', () => {
  let gateway: ServiceProcess;
  let conversations: ServiceProcess;
  let webhooks: ServiceProcess;
  let receiver: WebhookReceiver;
  let otlp: OtlpReceiver;
  let api: ApiClient;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    otlp = await OtlpReceiver.start();
    const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
    [conversations, webhooks, gateway] = await Promise.all([
      ServiceProcess.start('conversations', tracing, STARTUP_MS),
      ServiceProcess.start('webhooks', { ...tracing, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, STARTUP_MS),
      ServiceProcess.start('gateway', { ...tracing, OTEL_SERVICE_NAME: 'api-gateway' }, STARTUP_MS),
    ]);
    const account = await createAccountWithCli('Tracing');
    api = new ApiClient(gateway.url, account.apiKey);
  }, STARTUP_MS + 30_000);

  afterAll(async () => {
    await Promise.all([gateway?.stop(), conversations?.stop(), webhooks?.stop()]);
    await Promise.all([receiver?.close(), otlp?.close()]);
  });

  it('follows one request from the caller through every service to the webhook, each span under its parent', async () => {
    expect((await api.post('/v1/webhooks', { url: receiver.url, events: ['message.received'] })).status).toBe(
      201,
    );
    const conversation = await api.post('/v1/conversations', {});
    expect(conversation.status).toBe(201);

    const traceId = hex(16);
    const callerSpanId = hex(8);
    const sent = await api.post(
      `/v1/conversations/${conversation.body.id}/messages`,
      { sender: 'visitor', content: 'Where is my parcel?' },
      { headers: { traceparent: `00-${traceId}-${callerSpanId}-01` } },
    );
    expect(sent.status).toBe(201);

    const [webhook] = await receiver.waitFor(1);
    const header = String(webhook.headers.traceparent);
    expect(header).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const named = (spans: ReceivedSpan[], service: string, name: string, kind: number) =>
      spans.find((span) => span.service === service && span.name === name && span.kind === kind);
    const pattern = ConversationRpc.sendMessage.pattern;
    const spans = await eventually(() => {
      const trace = otlp.trace(traceId);
      return trace.length >= 6 && named(trace, 'webhooks', 'webhook deliver', SPAN_KIND.client) && trace;
    }, 15_000);

    const request = spans.find((span) => span.parentSpanId === callerSpanId)!;
    expect(request).toMatchObject({ service: 'api-gateway', kind: SPAN_KIND.server });
    expect(request.name).toMatch(/^POST \/v1\/conversations\/:\w+\/messages$/);
    expect(request.attributes['http.response.status_code']).toBe(201);
    const command = named(spans, 'conversations', `${pattern} process`, SPAN_KIND.server);
    const statement = named(spans, 'conversations', 'append_messages', SPAN_KIND.internal);
    const publish = named(spans, 'conversations', 'conversations.events publish', SPAN_KIND.producer);
    const fanOut = named(spans, 'webhooks', 'conversations.events process', SPAN_KIND.consumer);
    const attempt = named(spans, 'webhooks', 'webhook deliver', SPAN_KIND.client);
    expect(command?.parentSpanId).toBe(request.spanId);
    expect(statement?.parentSpanId).toBe(command!.spanId);
    expect(statement!.links).toContainEqual({ traceId, spanId: command!.spanId });
    expect(publish?.parentSpanId).toBe(command!.spanId);
    expect(fanOut?.parentSpanId).toBe(publish!.spanId);
    expect(attempt?.parentSpanId).toBe(fanOut!.spanId);
    expect(attempt!.attributes['http.response.status_code']).toBe(200);
    expect(header).toBe(`00-${traceId}-${attempt!.spanId}-01`);

    // These six spans and no others (no span per RPC call, Postgres query or Redis command): one
    // tree, only the request's span has the caller's as its parent.
    expect(spans).toHaveLength(6);
    const ids = new Set(spans.map((span) => span.spanId));
    expect(spans.filter((span) => !ids.has(span.parentSpanId))).toEqual([request]);

    // The CloudEvent carries the command's context (CloudEvents distributed tracing).
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT envelope->>'traceparent' AS traceparent FROM conversations.outbox
          WHERE conversation_id = $1 AND type = 'message.received'`,
        [conversation.body.id],
      );
      expect(rows).toEqual([{ traceparent: `00-${traceId}-${command!.spanId}-01` }]);
    } finally {
      await db.end();
    }
  });

  it('starts a trace of its own for a request without traceparent, and ignores a malformed one', async () => {
    for (const headers of [{}, { traceparent: '00-not-a-trace-01' }] as Record<string, string>[]) {
      const response = await api.post('/v1/conversations', {}, { headers });
      expect(response.status).toBe(201);
      const started = await eventually(
        () =>
          otlp.spans.find(
            (span) =>
              span.service === 'conversations' &&
              span.attributes['app.request_id'] === response.headers.get('x-request-id'),
          ),
        15_000,
      );
      // The gateway's span ends with the response, so it may be exported after the command's.
      const roots = await eventually(() => {
        const found = otlp.trace(started.traceId).filter((span) => span.parentSpanId === '');
        return found.length > 0 && found;
      });
      expect(roots).toEqual([expect.objectContaining({ service: 'api-gateway', kind: SPAN_KIND.server })]);
    }
  });
});

import { Agent, request } from 'undici';
import { signatureHeader } from './signature';
import { parseRetryAfter } from './retry-schedule';
import { TargetBlockedError, TargetPolicy } from './target-policy';

/** How much of a subscriber's response body the delivery log keeps. */
export const RESPONSE_BODY_LOG_BYTES = 1024;

export interface OutgoingWebhook {
  url: string;
  /** `webhook-id`: the event's id, the same on every attempt. */
  webhookId: string;
  body: string;
  /** Current secret first; a rotated-out one still in its grace period after it. */
  secrets: string[];
}

export interface AttemptResult {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  retryAfterSeconds?: number;
}

const USER_AGENT = 'ConversationMessaging-Webhooks/1.0';

/**
 * One HTTP attempt of one webhook, with undici. Every connection resolves its host through the
 * target policy's `lookup`, which checks each address and connects to the one checked; IP-literal
 * hosts (which never reach a lookup) are checked here first. Redirects are not followed (undici's
 * `request` does not), and the whole attempt, body included, is bounded by the timeout.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    private readonly policy: TargetPolicy,
    private readonly timeoutMs: number,
  ) {
    this.agent = new Agent({
      connect: { lookup: policy.lookup as never, timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
    });
  }

  async send(webhook: OutgoingWebhook): Promise<AttemptResult> {
    const startedAt = new Date();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const url = new URL(webhook.url);
      // IP literals are connected to without a lookup: check them here (hostnames in lookup).
      this.policy.checkLiteral(url.hostname);
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': webhook.webhookId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(webhook.secrets, webhook.webhookId, timestamp, webhook.body),
        },
        body: webhook.body,
      });
      const responseBody = await readPrefix(response.body, RESPONSE_BODY_LOG_BYTES);
      const statusCode = response.statusCode;
      const retryAfterSeconds =
        statusCode === 429 || statusCode === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined;
      return { startedAt, durationMs: elapsed(), statusCode, responseBody, error: null, retryAfterSeconds };
    } catch (error) {
      return { startedAt, durationMs: elapsed(), statusCode: null, responseBody: null, error: describe(error, this.timeoutMs) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** The first `limit` bytes of a body as text; the rest is discarded (and the stream closed). */
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  // Cut on a character boundary: drop a trailing partial UTF-8 sequence.
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8').replace(/\uFFFD+$/, '');
}

function describe(error: unknown, timeoutMs: number): string {
  const failure = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (error instanceof TargetBlockedError || failure?.cause instanceof TargetBlockedError) {
    return `target refused: ${(error instanceof TargetBlockedError ? error : (failure.cause as Error)).message}`;
  }
  const code = failure?.code ?? failure?.cause?.code;
  if (
    failure?.name === 'TimeoutError' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return `timed out after ${timeoutMs} ms`;
  }
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host could not be resolved';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset';
  const message = failure?.cause?.message ?? failure?.message ?? String(error);
  return message.slice(0, 500);
}

import { Agent, request } from 'undici';
import { contextFrom, contextOf, endSpan, SpanKind, startSpan, traceHeaders } from '@app/observability';
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
  /** The trace context the attempt's span continues (its event's fan-out), if any. */
  traceparent?: string | null;
}

/** Why an attempt got no HTTP response. */
export type AttemptFailure = 'timeout' | 'connection' | 'blocked' | 'other';

export interface AttemptResult {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  /** Set when there is no status code. */
  failure?: AttemptFailure;
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
      connect: { lookup: policy.lookup, timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
    });
  }

  /**
   * One span per attempt (docs/operations.md "Tracing"), whose context the request carries in
   * `traceparent`: the subscriber's own spans join the trace.
   */
  async send(webhook: OutgoingWebhook): Promise<AttemptResult> {
    const span = startSpan('webhook deliver', {
      kind: SpanKind.CLIENT,
      parent: contextFrom(webhook.traceparent ? { traceparent: webhook.traceparent } : undefined),
      attributes: { 'app.webhook_id': webhook.webhookId },
    });
    const result = await this.attempt(webhook, traceHeaders(contextOf(span)));
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
    const succeeded = result.statusCode !== null && result.statusCode < 300;
    endSpan(span, succeeded ? undefined : (result.error ?? `HTTP ${String(result.statusCode)}`));
    return result;
  }

  private async attempt(webhook: OutgoingWebhook, trace: Record<string, string>): Promise<AttemptResult> {
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
          ...trace,
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
        statusCode === 429 || statusCode === 503
          ? parseRetryAfter(response.headers['retry-after'])
          : undefined;
      return { startedAt, durationMs: elapsed(), statusCode, responseBody, error: null, retryAfterSeconds };
    } catch (error) {
      return {
        startedAt,
        durationMs: elapsed(),
        statusCode: null,
        responseBody: null,
        ...describe(error, this.timeoutMs),
      };
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
  return Buffer.concat(chunks)
    .subarray(0, limit)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}

/** Error codes of a connection that failed or broke, as the delivery log words them. */
const CONNECTION_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host could not be resolved',
  EAI_AGAIN: 'host could not be resolved',
  ECONNRESET: 'connection reset',
  UND_ERR_SOCKET: 'connection reset',
};

function describe(error: unknown, timeoutMs: number): { error: string; failure: AttemptFailure } {
  const problem = error as {
    name?: string;
    code?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (error instanceof TargetBlockedError || problem?.cause instanceof TargetBlockedError) {
    const blocked = error instanceof TargetBlockedError ? error : (problem.cause as Error);
    return { error: `target refused: ${blocked.message}`, failure: 'blocked' };
  }
  const code = problem?.code ?? problem?.cause?.code;
  if (
    problem?.name === 'TimeoutError' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return { error: `timed out after ${timeoutMs} ms`, failure: 'timeout' };
  }
  if (code && CONNECTION_ERRORS[code]) return { error: CONNECTION_ERRORS[code], failure: 'connection' };
  const message = problem?.cause?.message ?? problem?.message ?? String(error);
  return { error: message.slice(0, 500), failure: 'other' };
}

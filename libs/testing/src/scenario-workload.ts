import { sleep } from './eventually';
import { ApiClient, type ApiResponse } from './api-client';

/** Messages each scenario sends after the create (which carries the first, a visitor's). */
const FOLLOW_UPS = ['agent', 'visitor', 'agent'] as const;
/** Answers without a definite outcome, which say when to retry (Retry-After). */
const RETRY_STATUSES = [503, 504];

export interface ExpectedConversation {
  contents: string[];
  status: 'active' | 'closed';
}

/**
 * A bounded load whose outcome is known exactly, for tests that stop replicas under it.
 * Scenarios (create with a visitor message, follow-ups, a lead on every other, a close on every
 * third) run by concurrent workers, each request to the next gateway in turn. Every POST has an
 * Idempotency-Key, and a request without a definite answer (connection refused, 503, 504, key in
 * use) is retried with the same key on the next gateway, so each operation applies exactly once
 * and the expected state is known exactly, whatever replica stops meanwhile.
 */
export class ScenarioWorkload {
  readonly conversations = new Map<string, ExpectedConversation>();
  /** Domain events the workload caused, by type. */
  readonly events: Record<string, number> = {};
  /**
   * Requests cut off after being sent (a reset, not a refused connection or an answer). A reset
   * can also hit a request the gateway never read (a connection it accepted just as it closed);
   * the POST's retry tells which: replayed from the idempotency store means it had been processed.
   */
  readonly resets: string[] = [];
  /** Resets of requests the gateway had processed: their response was lost. */
  readonly lostResponses: string[] = [];
  /** Responses per gateway URL, with the time they arrived. */
  readonly answeredAt: Array<{ url: string; at: number }> = [];
  /** Answers that asked for a retry (503, 504, key in use), by status and problem code ("503 overloaded"). */
  readonly retried: Record<string, number> = {};
  completed = 0;
  private nextGateway = 0;
  private stopped = false;

  constructor(
    private readonly gateways: string[],
    private readonly apiKey: string,
    private readonly name: string,
    private readonly workers = 6,
  ) {}

  /** Runs `scenarios` per worker, or until stop() when not given. */
  run(scenarios = Infinity): Promise<void> {
    return Promise.all(
      Array.from({ length: this.workers }, async (_, worker) => {
        for (let n = 0; n < scenarios && !this.stopped; n++)
          await this.scenario(`${this.name}-${worker}-${n}`, n);
      }),
    ).then(() => undefined);
  }

  stop(): void {
    this.stopped = true;
  }

  /** Through `api`: the account holds exactly the conversations, messages and statuses applied. */
  async expectApplied(api: ApiClient): Promise<void> {
    const list = await this.read(api, '/v1/conversations?limit=1');
    expect(list.body.pagination.total).toBe(this.conversations.size);
    const ids = [...this.conversations.keys()];
    for (let i = 0; i < ids.length; i += 10) {
      const found = await Promise.all(
        ids.slice(i, i + 10).map((id) => this.read(api, `/v1/conversations/${id}`)),
      );
      for (const [j, response] of found.entries()) {
        const expected = this.conversations.get(ids[i + j])!;
        expect({
          status: response.body.status,
          message_count: response.body.message_count,
          contents: response.body.messages.map((m: { content: string }) => m.content),
        }).toEqual({
          status: expected.status,
          message_count: expected.contents.length,
          contents: expected.contents,
        });
      }
    }
  }

  /**
   * A GET answered 200: one that asks for a retry (503 shed or unavailable, 504) is asked again,
   * as a client would, for as long as a busy machine or a replica's restart may take (bounded).
   */
  private async read(api: ApiClient, path: string): Promise<ApiResponse> {
    let response = await api.get(path);
    for (let attempt = 1; attempt < 120 && RETRY_STATUSES.includes(response.status); attempt++) {
      await sleep(500);
      response = await api.get(path);
    }
    expect({ path, status: response.status }).toEqual({ path, status: 200 });
    return response;
  }

  private async scenario(id: string, n: number): Promise<void> {
    const created = await this.call('POST', '/v1/conversations', `${id}-create`, {
      subject: id,
      message: { sender: 'visitor', content: `${id} hello` },
    });
    const expected: ExpectedConversation = { contents: [`${id} hello`], status: 'active' };
    this.conversations.set(created.id, expected);
    this.count('conversation.started', 'message.received');
    for (const [i, sender] of FOLLOW_UPS.entries()) {
      const content = `${id} ${sender} ${i}`;
      await this.call('POST', `/v1/conversations/${created.id}/messages`, `${id}-message-${i}`, {
        sender,
        content,
      });
      expected.contents.push(content);
      this.count(sender === 'visitor' ? 'message.received' : 'message.sent');
    }
    if (n % 2 === 0) {
      await this.call('POST', `/v1/conversations/${created.id}/lead`, `${id}-lead`, {
        email: `${id}@example.com`,
      });
      this.count('lead.captured');
    }
    if (n % 3 === 0) {
      // Closing a closed conversation is a no-op 200 without an event: safe to retry as it is.
      await this.call('PATCH', `/v1/conversations/${created.id}`, undefined, { status: 'closed' });
      expected.status = 'closed';
      this.count('conversation.closed');
    }
    this.completed++;
  }

  private count(...types: string[]): void {
    for (const type of types) this.events[type] = (this.events[type] ?? 0) + 1;
  }

  private async call(
    method: string,
    path: string,
    idempotencyKey: string | undefined,
    body: unknown,
  ): Promise<any> {
    let reset: string | undefined;
    for (let attempt = 0; attempt < 300; attempt++) {
      const url = this.gateways[this.nextGateway++ % this.gateways.length];
      const headers: Record<string, string> = idempotencyKey ? { 'idempotency-key': idempotencyKey } : {};
      try {
        const response = await new ApiClient(url, this.apiKey).request(method, path, { body, headers });
        this.answeredAt.push({ url, at: Date.now() });
        if (response.status < 300) {
          if (reset && response.headers.get('idempotent-replayed') === 'true') this.lostResponses.push(reset);
          return response.body;
        }
        const retryable =
          RETRY_STATUSES.includes(response.status) || response.body?.code === 'idempotency_key_in_use';
        if (!retryable) throw new Error(`${method} ${path} answered ${response.status}: ${response.text}`);
        const reason = `${response.status} ${response.body?.code ?? ''}`.trim();
        this.retried[reason] = (this.retried[reason] ?? 0) + 1;
      } catch (error) {
        // fetch's network failures (a TypeError of Node's realm, not Jest's: compared by name).
        if ((error as Error).name !== 'TypeError') throw error;
        const code = ((error as Error).cause as { code?: string } | undefined)?.code;
        if (code !== 'ECONNREFUSED') {
          reset = `${method} ${url}${path}: ${code ?? (error as Error).message}`;
          this.resets.push(reset);
        }
      }
      await sleep(50);
    }
    throw new Error(`${method} ${path}: no definite answer after 300 attempts`);
  }
}

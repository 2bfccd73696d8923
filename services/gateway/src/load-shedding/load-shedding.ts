import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { DomainError, PROBLEM_CONTENT_TYPE, retryAfterSeconds, toProblem } from '@app/errors';
import { METRIC_PREFIX } from '@app/observability';
import { isOperationsRoute } from '../health/operations-routes';

export interface LoadSheddingBounds {
  /** Requests in flight (received, not yet answered) from which new ones are refused; 0: no bound. */
  maxInFlight: number;
  /** Event-loop delay (ms) from which new requests are refused; 0: no bound. */
  maxEventLoopDelayMs: number;
}

export type ShedReason = 'in_flight' | 'event_loop_delay';

declare module 'fastify' {
  interface FastifyRequest {
    /** Refused by the load shedder: counted, not logged one by one. */
    shed: boolean;
    /** Stops counting the request as in flight (an event stream, once open); null on health and metrics. */
    leaveInFlight: (() => void) | null;
  }
}

/**
 * The event-loop delay is the mean of what Node measured (every 10 ms) over each such window:
 * sustained saturation, not one garbage collection or a single slow tick.
 */
const DELAY_WINDOW_MS = 250;
/** Shed requests get no log line each (that would cost more than refusing them): one summary at most this often. */
const SUMMARY_INTERVAL_MS = 10_000;

const OVERLOADED = new DomainError(
  'overloaded',
  'The server is over capacity; retry after the time in Retry-After.',
);

/**
 * Sheds load (issue 10, item 13): past its bounds the gateway answers 503 `overloaded` with
 * Retry-After at once, instead of queueing work it cannot finish in time, so that the requests it
 * does admit keep their latency and nothing times out into a 500. Two signals: requests in
 * flight (work queued behind the gateway: RabbitMQ, the services, Postgres) and the gateway's own
 * event-loop delay (it is short of CPU). Health and metrics are never shed.
 *
 * Refusing must cost next to nothing, or refusing would itself be the overload: the hook is the
 * first of the server's, and writes its small problem document straight to the socket. Shed
 * requests are counted (metrics, and a summary log line), not logged one by one.
 */
export class LoadShedder {
  private inFlight = 0;
  private eventLoopDelayMs = 0;
  private readonly histogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly sampler: NodeJS.Timeout;
  private readonly shed: Counter<'reason'>;
  private unreported = { in_flight: 0, event_loop_delay: 0 };
  private lastSummary = 0;

  constructor(
    private readonly bounds: LoadSheddingBounds,
    registry: Registry,
    private readonly logger?: Logger,
  ) {
    this.histogram.enable();
    this.sampler = setInterval(() => this.sample(), DELAY_WINDOW_MS).unref();
    this.shed = new Counter({
      name: `${METRIC_PREFIX}http_requests_shed_total`,
      help: 'Requests refused with 503 overloaded, by the bound that was passed (in_flight, event_loop_delay)',
      labelNames: ['reason'],
      registers: [registry],
    });
    const inFlight = () => this.inFlight;
    new Gauge({
      name: `${METRIC_PREFIX}http_requests_in_flight`,
      help: 'Requests received and not yet answered (health and metrics excepted)',
      registers: [registry],
      collect() {
        this.set(inFlight());
      },
    });
  }

  /** Why a new request must be refused now, if it must. */
  reasonToShed(): ShedReason | undefined {
    const { maxInFlight, maxEventLoopDelayMs } = this.bounds;
    if (maxInFlight > 0 && this.inFlight >= maxInFlight) return 'in_flight';
    if (maxEventLoopDelayMs > 0 && this.eventLoopDelayMs >= maxEventLoopDelayMs) return 'event_loop_delay';
    return undefined;
  }

  register(fastify: FastifyInstance): void {
    fastify.decorateRequest('shed', false);
    fastify.decorateRequest('leaveInFlight', null);
    // Starting up blocks the loop for a while: that says nothing about load.
    fastify.addHook('onListen', (done) => {
      this.histogram.reset();
      this.eventLoopDelayMs = 0;
      done();
    });
    fastify.addHook('onRequest', (request, reply, done) => {
      if (isOperationsRoute(request)) return done();
      const reason = this.reasonToShed();
      if (reason) return this.refuse(request, reply, reason);
      this.inFlight += 1;
      let counted = true;
      // 'close': the response was sent, or the client went away first; either way, once. A
      // stream leaves earlier, once it is open: it is a connection held, not work queued.
      request.leaveInFlight = () => {
        if (counted) this.inFlight -= 1;
        counted = false;
      };
      reply.raw.once('close', request.leaveInFlight);
      done();
    });
  }

  close(): void {
    clearInterval(this.sampler);
    this.histogram.disable();
  }

  private sample(): void {
    this.eventLoopDelayMs = this.histogram.count > 0 ? this.histogram.mean / 1e6 : 0;
    this.histogram.reset();
  }

  /** The 503, written directly (no further hooks but the response metrics'). */
  private refuse(request: FastifyRequest, reply: FastifyReply, reason: ShedReason): void {
    this.shed.inc({ reason });
    this.report(reason);
    request.shed = true;
    const body = JSON.stringify(toProblem(OVERLOADED, request.id, request.url.split('?')[0]));
    reply.hijack();
    reply.raw.writeHead(503, {
      'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
      'content-length': Buffer.byteLength(body),
      'retry-after': String(retryAfterSeconds('overloaded')),
      'x-request-id': request.id,
    });
    reply.raw.end(body);
  }

  private report(reason: ShedReason): void {
    this.unreported[reason] += 1;
    const now = Date.now();
    if (!this.logger || now - this.lastSummary < SUMMARY_INTERVAL_MS) return;
    this.logger.warn(
      {
        shed: this.unreported,
        in_flight: this.inFlight,
        event_loop_delay_ms: Math.round(this.eventLoopDelayMs),
      },
      'shedding load',
    );
    this.unreported = { in_flight: 0, event_loop_delay: 0 };
    this.lastSummary = now;
  }
}

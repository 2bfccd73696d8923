import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { overloaded, PROBLEM_CONTENT_TYPE, retryAfterSeconds, toProblem } from '@app/errors';
import { METRIC_PREFIX } from '@app/observability';
import { isOperationsRoute } from '../health/operations-routes';
import { AdaptiveLimit } from './adaptive-limit';

export interface LoadSheddingBounds {
  /**
   * The ceiling of requests in flight (received, not yet answered); 0: none. Under it the bound
   * is adaptive (AdaptiveLimit): it follows the time requests take.
   */
  maxInFlight: number;
  /** Event-loop delay (ms) from which new requests are refused; 0: no bound. */
  maxEventLoopDelayMs: number;
}

/**
 * `queued`: waited half the rate limiter's budget before its check; `limiter_late`: its check
 * timed out while the event loop ran late (the gateway's load, not Redis).
 */
export type ShedReason = 'in_flight' | 'event_loop_delay' | 'queued' | 'limiter_late';

declare module 'fastify' {
  interface FastifyRequest {
    /** Refused by the load shedder: counted, not logged one by one. */
    shed: boolean;
    /** Stops counting the request as in flight (an event stream, once open); null on health and metrics. */
    leaveInFlight: (() => void) | null;
    /** performance.now() when the shedder admitted it; 0 on health and metrics. */
    admittedAt: number;
  }
}

/**
 * The event-loop delay is the mean of what Node measured (every 10 ms) over each such window:
 * sustained saturation, not one garbage collection or a single slow tick.
 */
const DELAY_WINDOW_MS = 250;
/** Shed requests get no log line each (that would cost more than refusing them): one summary at most this often. */
const SUMMARY_INTERVAL_MS = 10_000;

const OVERLOADED = overloaded();
/** Without a ceiling, the adaptive limit's own (it never gets near it on one process). */
const NO_CEILING = 100_000;
/** The least the adaptive limit goes down to (it starts at the ceiling, 512 by default). */
const MIN_LIMIT = 32;
/** A gateway that shed a request this recently is overloaded. */
const RECENT_SHED_MS = 1000;

/**
 * Sheds load (docs/operations.md, "Overload and time bounds"): past its bounds the gateway answers 503 `overloaded` with
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
  private unreported: Record<ShedReason, number> = {
    in_flight: 0,
    event_loop_delay: 0,
    queued: 0,
    limiter_late: 0,
  };
  private readonly adaptive: AdaptiveLimit;
  /** The largest event-loop delay (ms) of the current and the previous window. */
  private recentMaxDelayMs = 0;
  private lastShedAt = -Infinity;
  private lastSummary = 0;

  constructor(
    private readonly bounds: LoadSheddingBounds,
    registry: Registry,
    private readonly logger?: Logger,
  ) {
    this.histogram.enable();
    const max = bounds.maxInFlight > 0 ? bounds.maxInFlight : NO_CEILING;
    this.adaptive = new AdaptiveLimit({
      initial: bounds.maxInFlight > 0 ? max : 512,
      min: Math.min(max, MIN_LIMIT),
      max,
    });
    this.sampler = setInterval(() => this.sample(), DELAY_WINDOW_MS).unref();
    this.shed = new Counter({
      name: `${METRIC_PREFIX}http_requests_shed_total`,
      help: 'Requests refused with 503 overloaded, by the bound that was passed (in_flight, event_loop_delay, queued: waited past the rate limiter budget)',
      labelNames: ['reason'],
      registers: [registry],
    });
    const inFlight = () => this.inFlight;
    const limit = () => this.adaptive.limit;
    new Gauge({
      name: `${METRIC_PREFIX}http_requests_in_flight_limit`,
      help: 'Requests in flight from which new ones are shed: the adaptive limit (it follows latency)',
      registers: [registry],
      collect() {
        this.set(limit());
      },
    });
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
    const { maxEventLoopDelayMs } = this.bounds;
    if (this.inFlight >= this.adaptive.limit) return 'in_flight';
    if (maxEventLoopDelayMs > 0 && this.eventLoopDelayMs >= maxEventLoopDelayMs) return 'event_loop_delay';
    return undefined;
  }

  register(fastify: FastifyInstance): void {
    fastify.decorateRequest('shed', false);
    fastify.decorateRequest('leaveInFlight', null);
    fastify.decorateRequest('admittedAt', 0);
    // Starting up blocks the loop for a while: that says nothing about load.
    fastify.addHook('onListen', (done) => {
      this.histogram.reset();
      this.eventLoopDelayMs = 0;
      this.recentMaxDelayMs = 0;
      done();
    });
    fastify.addHook('onRequest', (request, reply, done) => {
      if (isOperationsRoute(request)) return done();
      const reason = this.reasonToShed();
      if (reason) return this.refuse(request, reply, reason);
      this.inFlight += 1;
      const inFlightAtArrival = this.inFlight;
      request.admittedAt = performance.now();
      let counted = true;
      // 'close': the response was sent, or the client went away first; either way, once. A
      // stream leaves earlier, once it is open: it is a connection held, not work queued.
      request.leaveInFlight = () => {
        if (counted && --this.inFlight === 0) this.adaptive.idle();
        counted = false;
      };
      reply.raw.once('close', () => {
        if (counted) {
          const now = performance.now();
          this.adaptive.sample(now - request.admittedAt, inFlightAtArrival, now);
        }
        request.leaveInFlight?.();
      });
      done();
    });
  }

  /**
   * Whether a request that has waited `waitedMs` since it was admitted (queued behind others for
   * the event loop, not waiting on I/O of its own) must be shed before its rate-limit check: the
   * check has `budgetMs` (REDIS_TIMEOUT_MS) to be answered, and with half of it gone in queueing
   * its answer would likely be read too late, and the limiter fail open for a reason that is the
   * gateway's own load.
   */
  tooLateForCheck(waitedMs: number, budgetMs: number): boolean {
    return waitedMs >= budgetMs / 2;
  }

  /**
   * Whether the gateway is overloaded now, so that a check timing out within `budgetMs` is our
   * own doing, not Redis's: its event loop ran late by half the budget lately, or it shed a
   * request in the last second.
   */
  loopLate(budgetMs: number): boolean {
    if (performance.now() - this.lastShedAt < RECENT_SHED_MS) return true;
    return Math.max(this.recentMaxDelayMs, this.histogram.max / 1e6) >= budgetMs / 2;
  }

  /** Counts a request shed after admission (the 503 is answered by the caller). */
  countShed(reason: ShedReason): void {
    this.lastShedAt = performance.now();
    this.shed.inc({ reason });
    this.report(reason);
  }

  close(): void {
    clearInterval(this.sampler);
    this.histogram.disable();
  }

  private sample(): void {
    this.eventLoopDelayMs = this.histogram.count > 0 ? this.histogram.mean / 1e6 : 0;
    this.recentMaxDelayMs = this.histogram.count > 0 ? this.histogram.max / 1e6 : 0;
    this.histogram.reset();
  }

  /** The 503, written directly (no further hooks but the response metrics'). */
  private refuse(request: FastifyRequest, reply: FastifyReply, reason: ShedReason): void {
    this.countShed(reason);
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
        in_flight_limit: this.adaptive.limit,
        event_loop_delay_ms: Math.round(this.eventLoopDelayMs),
      },
      'shedding load',
    );
    this.unreported = { in_flight: 0, event_loop_delay: 0, queued: 0, limiter_late: 0 };
    this.lastSummary = now;
  }
}

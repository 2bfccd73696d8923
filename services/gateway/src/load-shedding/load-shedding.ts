import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Registry } from 'prom-client';
import { DomainError } from '@app/errors';
import { METRIC_PREFIX } from '@app/observability';
import { isOperationsRoute } from '../health/operations-routes';
import { sendProblem } from '../http/problem.filter';

export interface LoadSheddingBounds {
  /** Requests in flight (received, not yet answered) from which new ones are refused; 0: no bound. */
  maxInFlight: number;
  /** Event-loop delay (ms) from which new requests are refused; 0: no bound. */
  maxEventLoopDelayMs: number;
}

export type ShedReason = 'in_flight' | 'event_loop_delay';

/**
 * The event-loop delay is the mean of what Node measured (every 10 ms) over each such window:
 * sustained saturation, not one garbage collection or a single slow tick.
 */
const DELAY_WINDOW_MS = 250;

/**
 * Sheds load (issue 10, item 13): past its bounds the gateway answers 503 `overloaded` with
 * Retry-After at once, instead of queueing work it cannot finish in time, so that the requests it
 * does admit keep their latency and nothing times out into a 500. Two signals: requests in
 * flight (work queued behind the gateway: RabbitMQ, the services, Postgres) and the gateway's own
 * event-loop delay (it is short of CPU). Health and metrics are never shed.
 */
export class LoadShedder {
  private inFlight = 0;
  private eventLoopDelayMs = 0;
  private readonly histogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly sampler: NodeJS.Timeout;
  private readonly shed: Counter<'reason'>;

  constructor(
    private readonly bounds: LoadSheddingBounds,
    registry: Registry,
  ) {
    this.histogram.enable();
    this.sampler = setInterval(() => this.sample(), DELAY_WINDOW_MS).unref();
    this.shed = new Counter({
      name: `${METRIC_PREFIX}http_requests_shed_total`,
      help: 'Requests refused with 503 overloaded, by the bound that was passed (in_flight, event_loop_delay)',
      labelNames: ['reason'],
      registers: [registry],
    });
    const shedder = this;
    new Gauge({
      name: `${METRIC_PREFIX}http_requests_in_flight`,
      help: 'Requests received and not yet answered (health and metrics excepted)',
      registers: [registry],
      collect() {
        this.set(shedder.inFlight);
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

  private sample(): void {
    this.eventLoopDelayMs = this.histogram.count > 0 ? this.histogram.mean / 1e6 : 0;
    this.histogram.reset();
  }

  register(fastify: FastifyInstance): void {
    // Starting up blocks the loop for a while: that says nothing about load.
    fastify.addHook('onListen', (done) => {
      this.histogram.reset();
      this.eventLoopDelayMs = 0;
      done();
    });
    fastify.addHook('onRequest', (request, reply, done) => {
      if (isOperationsRoute(request)) return done();
      const reason = this.reasonToShed();
      if (reason) {
        this.shed.inc({ reason });
        sendProblem(request, reply, overloaded());
        return;
      }
      this.inFlight += 1;
      // 'close': the response was sent, or the client went away first; either way, once.
      reply.raw.once('close', () => (this.inFlight -= 1));
      done();
    });
  }

  close(): void {
    clearInterval(this.sampler);
    this.histogram.disable();
  }
}

function overloaded(): DomainError {
  return new DomainError('overloaded', 'The server is over capacity; retry after the time in Retry-After.');
}

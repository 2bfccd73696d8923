import { AdaptiveLimit } from './adaptive-limit';

/**
 * The adaptive concurrency limit: it follows the time requests take, so the queue inside the
 * gateway stays a small multiple of the work's own time whatever the offered load.
 */
describe('AdaptiveLimit', () => {
  /** `seconds` of answered requests, 10 ms apart, each taking `rttMs` with `inFlight` in flight. */
  function run(
    limit: AdaptiveLimit,
    clock: { now: number },
    seconds: number,
    rttMs: (l: number) => number,
    inFlight: (l: number) => number,
  ) {
    for (let i = 0; i < seconds * 100; i++) {
      clock.now += 10;
      limit.sample(rttMs(limit.limit), inFlight(limit.limit), clock.now);
    }
  }

  /** A limit at its ceiling (512) after 5 s of the usual: 20 ms a request at 40 in flight. */
  function afterTheUsual() {
    const limit = new AdaptiveLimit({ initial: 512, min: 32, max: 512 });
    const clock = { now: 0 };
    run(
      limit,
      clock,
      5,
      () => 20,
      () => 40,
    );
    return { limit, clock };
  }

  it('stays at its ceiling while requests take their usual time with the limit in use', () => {
    const limit = new AdaptiveLimit({ initial: 512, min: 32, max: 512 });
    run(
      limit,
      { now: 0 },
      10,
      () => 20,
      (l) => l,
    );
    expect(limit.limit).toBe(512);
  });

  it('shrinks as requests queue (time in proportion to those in flight), to where they take about twice their usual time', () => {
    const { limit, clock } = afterTheUsual();
    // Overloaded: every request in flight beyond 40 queues behind the others.
    const queued = (l: number) => 20 * Math.max(1, l / 40);
    run(limit, clock, 20, queued, (l) => l);
    expect(limit.limit).toBeLessThan(150);
    expect(limit.limit).toBeGreaterThanOrEqual(32);
    expect(queued(limit.limit)).toBeLessThan(3 * 20);
  });

  it('keeps its place when a steady number of clients send slower requests (a mix, not a queue)', () => {
    const { limit, clock } = afterTheUsual();
    // 64 connections that switch from 20 ms reads to 60 ms writes: each waits for its answer, so
    // no more than 64 are ever in flight and nothing queues in the gateway. Shrinking below 64
    // would shed a closed loop that the machine serves.
    run(
      limit,
      clock,
      20,
      () => 60,
      () => 64,
    );
    expect(limit.limit).toBe(512);
  });

  it('does not change while under half of it is used, and recovers once requests are fast again', () => {
    const limit = new AdaptiveLimit({ initial: 100, min: 32, max: 512 });
    const clock = { now: 0 };
    run(
      limit,
      clock,
      5,
      () => 20,
      () => 10,
    );
    expect(limit.limit).toBe(100);
    run(
      limit,
      clock,
      5,
      () => 200,
      () => 10,
    ); // slow, but not queueing at the limit
    expect(limit.limit).toBe(100);
    run(
      limit,
      clock,
      5,
      () => 200,
      (l) => l,
    );
    const low = limit.limit;
    expect(low).toBeLessThan(100);
    run(
      limit,
      clock,
      20,
      () => 20,
      (l) => l,
    );
    expect(limit.limit).toBeGreaterThan(low);
  });

  /**
   * A service that works on `capacity` commands at once (its consumers' prefetch), each taking
   * `serviceMs`: of `inFlight` commands the rest wait in the broker's queue, each slot's worth of
   * them for one service time. Every 10 ms one request is answered, with its RPC reply's times.
   */
  function serve(
    limit: AdaptiveLimit,
    clock: { now: number },
    seconds: number,
    service: Service,
    inFlight: (l: number) => number,
  ) {
    for (let i = 0; i < seconds * 100; i++) {
      clock.now += 10;
      const n = inFlight(limit.limit);
      const queuedMs = queuedAt(n, service);
      limit.queued(queuedMs, service.serviceMs);
      limit.sample(queuedMs + service.serviceMs, n, clock.now);
    }
  }
  interface Service {
    capacity: number;
    serviceMs: number;
  }
  /** How long a command waits in the broker's queue with `n` in flight. */
  const queuedAt = (n: number, service: Service) =>
    (Math.max(0, n - service.capacity) / service.capacity) * service.serviceMs;

  it('comes down when commands queue behind the services, even with under half of it in use', () => {
    const { limit, clock } = afterTheUsual();
    // The offered load fills 240 of the 512 (under half): 208 commands wait in the broker for the
    // 32 the service works on, 130 ms each against its 20 ms of work.
    const service = { capacity: 32, serviceMs: 20 };
    serve(limit, clock, 10, service, (l) => Math.min(l, 240));
    expect(limit.limit).toBeLessThan(120);
    expect(limit.limit).toBeGreaterThanOrEqual(32);
    expect(queuedAt(limit.limit, service)).toBeLessThanOrEqual(3 * service.serviceMs);
  });

  it('does not cut again before the last cut can show (one wait and one service time)', () => {
    const { limit, clock } = afterTheUsual();
    const service = { capacity: 32, serviceMs: 50 };
    // 400 in flight, then as many as the limit lets in; but for 200 ms the replies are those of
    // commands queued before the cut, which waited as long as before (575 ms).
    const staleWaitMs = queuedAt(400, service);
    for (let i = 0; i < 20; i++) {
      clock.now += 10;
      limit.queued(staleWaitMs, service.serviceMs);
      limit.sample(staleWaitMs + service.serviceMs, Math.min(400, limit.limit), clock.now);
    }
    expect(limit.limit).toBe(200); // cut once, to half of the 400 in flight; not again on the old queue
  });

  it('is not cut by a closed loop whose requests get slower (one service time of commands waiting)', () => {
    const { limit, clock } = afterTheUsual();
    // 64 connections, a service working on 32 at once: 32 wait in the broker, for one service
    // time, whether a command takes 20 ms or 60.
    serve(limit, clock, 10, { capacity: 32, serviceMs: 20 }, () => 64);
    serve(limit, clock, 20, { capacity: 32, serviceMs: 60 }, () => 64);
    expect(limit.limit).toBe(512);
  });

  it('takes a wait of a few milliseconds for the wire, not a queue, however fast the services', () => {
    const { limit, clock } = afterTheUsual();
    serve(limit, clock, 10, { capacity: 4, serviceMs: 1 }, () => 40); // 9 ms waits, 9x the 1 ms of work
    expect(limit.limit).toBe(512);
  });
});

import { AdaptiveLimit, LATENCY_OBJECTIVE_MS } from './adaptive-limit';

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

  /** `seconds` of the usual: 20 ms a request at 40 in flight. */
  const usual = (limit: AdaptiveLimit, clock: { now: number }, seconds: number) =>
    run(
      limit,
      clock,
      seconds,
      () => 20,
      () => 40,
    );

  /** A second of a queue behind the gateway (RabbitMQ, a slow service): 200 in flight, each taking 1 s. */
  const queueBehind = (limit: AdaptiveLimit, clock: { now: number }) =>
    run(
      limit,
      clock,
      1,
      () => 1000,
      () => 200,
    );

  /** A limit at its ceiling (512) after 5 s of the usual: 20 ms a request at 40 in flight. */
  function afterTheUsual() {
    const limit = new AdaptiveLimit({ initial: 512, min: 32, max: 512 });
    const clock = { now: 0 };
    usual(limit, clock, 5);
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

  it('caps itself when requests are late past the objective, though under half of it is in use', () => {
    const { limit, clock } = afterTheUsual();
    queueBehind(limit, clock);
    expect(limit.limit).toBeLessThanOrEqual((200 * LATENCY_OBJECTIVE_MS) / 1000);
    expect(limit.limit).toBeGreaterThanOrEqual(32);
  });

  it('lifts the cap step by step once requests are fast again, and at once when nothing is in flight', () => {
    const { limit, clock } = afterTheUsual();
    queueBehind(limit, clock);
    const capped = limit.limit;
    usual(limit, clock, 0.2);
    expect(limit.limit).toBeGreaterThan(capped);
    expect(limit.limit).toBeLessThan(512);
    usual(limit, clock, 2);
    expect(limit.limit).toBe(512);

    queueBehind(limit, clock);
    expect(limit.limit).toBeLessThan(512);
    limit.idle();
    expect(limit.limit).toBe(512);
  });

  it('is not capped by a steady number of clients whose requests take longer within the objective', () => {
    const { limit, clock } = afterTheUsual();
    run(
      limit,
      clock,
      20,
      () => LATENCY_OBJECTIVE_MS - 10,
      () => 64,
    );
    expect(limit.limit).toBe(512);
  });
});

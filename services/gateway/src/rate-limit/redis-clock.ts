/** A sample older than this is replaced by the next one, however loose: clocks drift. */
const SAMPLE_MAX_AGE_MS = 60_000;

/**
 * This process's estimate of Redis's clock, from the Redis time each limiter call returns: the
 * offset is taken from the call with the shortest round trip (within the last minute), so it is
 * off by at most half of that round trip.
 */
export class RedisClock {
  private offsetMs?: number;
  private sample = { roundTripMs: Infinity, at: 0 };

  /** A call sent at `sentAtMs` and answered at `receivedAtMs` (local Date.now()) read Redis's clock as `redisNowMs`. */
  observe(sentAtMs: number, receivedAtMs: number, redisNowMs: number): void {
    const roundTripMs = receivedAtMs - sentAtMs;
    if (roundTripMs > this.sample.roundTripMs && receivedAtMs - this.sample.at < SAMPLE_MAX_AGE_MS) return;
    this.offsetMs = redisNowMs - (sentAtMs + roundTripMs / 2);
    this.sample = { roundTripMs, at: receivedAtMs };
  }

  /** Redis's time at local time `localMs`, once a call has been seen. */
  toRedis(localMs: number): number | undefined {
    return this.offsetMs === undefined ? undefined : Math.floor(localMs + this.offsetMs);
  }
}

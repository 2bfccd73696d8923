/** A sample older than this is replaced by the next good one, even if that is less precise: clocks drift. */
const SAMPLE_MAX_AGE_MS = 60_000;
/** Only calls answered this fast say where Redis's clock is (a slow answer may have waited anywhere). */
const MAX_SAMPLE_ROUND_TRIP_MS = 20;

/**
 * This process's estimate of Redis's clock, from the Redis time the limiter calls return: taken
 * from the fastest recent call, so it is off by at most half of that call's round trip.
 */
export class RedisClock {
  private sample?: { offsetMs: number; uncertaintyMs: number; at: number };

  /** A call sent at `sentAtMs` and answered at `receivedAtMs` (local Date.now()) read Redis's clock as `redisNowMs`. */
  observe(sentAtMs: number, receivedAtMs: number, redisNowMs: number): void {
    const roundTripMs = receivedAtMs - sentAtMs;
    if (roundTripMs > MAX_SAMPLE_ROUND_TRIP_MS) return;
    const current = this.sample;
    const fresh = current && receivedAtMs - current.at < SAMPLE_MAX_AGE_MS;
    if (fresh && roundTripMs / 2 > current.uncertaintyMs) return;
    this.sample = {
      offsetMs: redisNowMs - (sentAtMs + roundTripMs / 2),
      uncertaintyMs: roundTripMs / 2,
      at: receivedAtMs,
    };
  }

  /**
   * The latest Redis time that can correspond to local time `localMs` (its estimate plus the
   * estimate's uncertainty), once a fast enough call has been seen.
   */
  latestRedisTime(localMs: number): number | undefined {
    const sample = this.sample;
    return sample && Math.ceil(localMs + sample.offsetMs + sample.uncertaintyMs);
  }
}

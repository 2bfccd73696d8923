import { RedisClock } from './redis-clock';

describe('RedisClock', () => {
  it('knows nothing before a call is seen', () => {
    expect(new RedisClock().latestRedisTime(1000)).toBeUndefined();
  });

  it('places Redis time from a fast call, erring late by at most half its round trip', () => {
    const clock = new RedisClock();
    // Redis's clock is 5000 ms ahead; the call took 10 ms and Redis ran it halfway.
    clock.observe(1000, 1010, 6005);
    expect(clock.latestRedisTime(2000)).toBe(7005);
  });

  it('ignores slow calls (they may have waited in a busy event loop) and prefers faster ones', () => {
    const clock = new RedisClock();
    clock.observe(1000, 1300, 6001); // answered 300 ms later: says little
    expect(clock.latestRedisTime(2000)).toBeUndefined();
    clock.observe(2000, 2010, 7005);
    clock.observe(3000, 3016, 8008); // slower than the previous sample: kept out
    expect(clock.latestRedisTime(4000)).toBe(9005);
    clock.observe(5000, 5002, 10_001); // faster: taken
    expect(clock.latestRedisTime(6000)).toBe(11_001);
  });

  it('takes a less precise sample once the best one is a minute old', () => {
    const clock = new RedisClock();
    clock.observe(0, 2, 5001);
    clock.observe(61_000, 61_010, 66_005 + 100); // Redis drifted 100 ms ahead since
    expect(clock.latestRedisTime(62_000)).toBe(67_105);
  });
});

import { loadConfig, webhooksSchema } from '@app/config';
import { nextAttemptDelayMs, parseRetryAfter } from './retry-schedule';

describe('retry schedule', () => {
  const svix = loadConfig(webhooksSchema, {}).WEBHOOK_RETRY_SCHEDULE;

  it('defaults to 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (eight attempts)', () => {
    expect(svix).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
  });

  it('WEBHOOK_RETRY_SCHEDULE overrides it; bad values stop start-up', () => {
    expect(loadConfig(webhooksSchema, { WEBHOOK_RETRY_SCHEDULE: '1,1,1' }).WEBHOOK_RETRY_SCHEDULE).toEqual([
      1, 1, 1,
    ]);
    expect(loadConfig(webhooksSchema, { WEBHOOK_RETRY_SCHEDULE: ' 0.5, 2 ' }).WEBHOOK_RETRY_SCHEDULE).toEqual(
      [0.5, 2],
    );
    for (const bad of ['x', '1,,2', '-1', '1;2', '700000', '1,2,'])
      expect(() => loadConfig(webhooksSchema, { WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(
        'WEBHOOK_RETRY_SCHEDULE',
      );
  });

  it('waits the scheduled delay plus at most 10% jitter after the n-th failure', () => {
    expect(nextAttemptDelayMs(svix, 1, undefined, () => 0)).toBe(5000);
    expect(nextAttemptDelayMs(svix, 1, undefined, () => 0.999)).toBe(5500);
    expect(nextAttemptDelayMs(svix, 2, undefined, () => 0)).toBe(300_000);
    expect(nextAttemptDelayMs(svix, 7, undefined, () => 0)).toBe(36_000_000);
    for (let i = 0; i < 100; i++) {
      const delay = nextAttemptDelayMs([1, 1, 1], 2);
      expect(delay).toBeGreaterThanOrEqual(1000);
      expect(delay).toBeLessThanOrEqual(1100);
    }
  });

  it('takes Retry-After as a floor, capped at a day', () => {
    expect(nextAttemptDelayMs([1], 1, 30, () => 0)).toBe(30_000);
    expect(nextAttemptDelayMs([60], 1, 2, () => 0)).toBe(60_000);
    expect(nextAttemptDelayMs([1], 1, 10 ** 9, () => 0)).toBe(86_400_000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:30 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

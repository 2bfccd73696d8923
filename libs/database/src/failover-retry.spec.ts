import { retryWhileDatabaseUnavailable } from './failover-retry';

const connectionLost = new Error('Connection terminated unexpectedly');
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5000'), { code: 'ECONNREFUSED' });
const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });

describe('retryWhileDatabaseUnavailable', () => {
  const noPauses = { delaysMs: [0, 0, 0] };

  it('runs the work again while the database is unreachable and returns its first success', async () => {
    const outcomes: Array<Error | string> = [connectionLost, refused, 'done'];
    let attempts = 0;
    const result = await retryWhileDatabaseUnavailable(async () => {
      const outcome = outcomes[attempts++];
      if (outcome instanceof Error) throw outcome;
      return outcome;
    }, noPauses);
    expect(result).toBe('done');
    expect(attempts).toBe(3);
  });

  it('runs the work again when Postgres rolled it back to break a deadlock', async () => {
    let attempts = 0;
    const result = await retryWhileDatabaseUnavailable(async () => {
      if (attempts++ === 0) throw deadlock;
      return 'done';
    }, noPauses);
    expect(result).toBe('done');
    expect(attempts).toBe(2);
  });

  it('keeps trying until the next attempt would start too late for the caller, then throws the last error', async () => {
    let attempts = 0;
    await expect(
      retryWhileDatabaseUnavailable(
        async () => {
          attempts += 1;
          throw refused;
        },
        // Past a 500 ms margin for the reply, 200 ms are left: room for a few 20 ms pauses.
        { delaysMs: [20], answerBy: Date.now() + 700 },
      ),
    ).rejects.toBe(refused);
    expect(attempts).toBeGreaterThan(2);
  });

  it('without a deadline, gives up within its own budget', async () => {
    let attempts = 0;
    await expect(
      retryWhileDatabaseUnavailable(
        async () => {
          attempts += 1;
          throw connectionLost;
        },
        { delaysMs: [1500] },
      ),
    ).rejects.toBe(connectionLost);
    expect(attempts).toBe(2);
  });

  it('does not try again when the caller would no longer be waiting for the answer', async () => {
    let attempts = 0;
    await expect(
      retryWhileDatabaseUnavailable(
        async () => {
          attempts += 1;
          throw refused;
        },
        { ...noPauses, answerBy: Date.now() },
      ),
    ).rejects.toBe(refused);
    expect(attempts).toBe(1);
  });

  it.each([
    ['a constraint', Object.assign(new Error('duplicate key'), { code: '23505' })],
    [
      'a statement timeout (the time is spent)',
      Object.assign(new Error('canceling statement'), { code: '57014' }),
    ],
    ['no pooled connection in time', new Error('timeout exceeded when trying to connect')],
  ])('never repeats work that failed for another reason: %s', async (_, failure) => {
    let attempts = 0;
    await expect(
      retryWhileDatabaseUnavailable(async () => {
        attempts += 1;
        throw failure;
      }, noPauses),
    ).rejects.toBe(failure);
    expect(attempts).toBe(1);
  });
});

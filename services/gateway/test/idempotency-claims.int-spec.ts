import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TestAccount, TestStack } from '@app/testing';
import { gatewayDataSourceOptions } from '../src/data-source';
import { IdempotencyRepository } from '../src/idempotency/idempotency.repository';

/**
 * The claim of an Idempotency-Key is tried again when its Postgres connection is lost (a failover,
 * docs/scaling.md "Postgres: Patroni behind HAProxy"), possibly after it did commit: run again with
 * the same token it is still the request's own claim, never "in use" by itself.
 */
describe('Idempotency-Key claims', () => {
  let stack: TestStack;
  let account: TestAccount;
  let db: DataSource;
  let keys: IdempotencyRepository;
  const request = { method: 'POST', path: '/v1/conversations', bodyHash: 'hash', arrivedAt: Date.now() };

  beforeAll(async () => {
    stack = await TestStack.start();
    account = await stack.createAccount();
    db = new DataSource(
      gatewayDataSourceOptions({ DATABASE_URL: process.env.DATABASE_URL!, DATABASE_POOL_SIZE: 1 }),
    );
    await db.initialize();
    keys = new IdempotencyRepository(db, 24, 10_000);
  });
  afterAll(async () => {
    await db?.destroy();
    await stack?.close();
  });

  it('a claim run again with its token (its first answer lost) is still the claim', async () => {
    const key = randomUUID();
    const token = randomUUID();
    const first = await keys.claim(account.accountId, key, request, token);
    const again = await keys.claim(account.accountId, key, request, token);
    expect(again).toEqual(first);
    expect(again).toEqual({ claim: { accountId: account.accountId, key, token } });
  });

  it('another request with the key while the claim is held finds it in use', async () => {
    const key = randomUUID();
    await keys.claim(account.accountId, key, request, randomUUID());
    const other = await keys.claim(account.accountId, key, request, randomUUID());
    expect(other).toEqual({ existing: expect.objectContaining({ statusCode: null }) });
  });
});

import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { Plan } from '@app/dialects';
import { execute, prepare } from '@app/database';
import { SCOPES, type Scope } from './scopes';
import { generateApiKey } from './api-key-format';

export interface AccountRecord {
  id: string;
  name: string;
  plan: Plan;
  created_at: string;
}

/** A key as an administrator lists it: never its secret. */
export interface KeySummary {
  keyId: string;
  accountId: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
}

export interface KeyRecord {
  accountId: string;
  plan: Plan;
  secretHash: Buffer;
  revoked: boolean;
  scopes: Scope[];
}

interface AccountRow {
  id: string;
  name: string;
  plan: Plan;
  created_at: Date;
}

interface KeyRow {
  id: string;
  account_id: string;
  scopes: Scope[];
  created_at: Date;
  revoked_at: Date | null;
}

const SQL = {
  createAccount: prepare<AccountRow>(
    `INSERT INTO gateway.accounts (id, name, plan) VALUES ($1, $2, $3)
       RETURNING id, name, plan, created_at`,
  ),
  listAccounts: prepare<AccountRow>(
    `SELECT id, name, plan, created_at FROM gateway.accounts ORDER BY created_at, id`,
  ),
  setPlan: prepare(`UPDATE gateway.accounts SET plan = $2 WHERE id = $1`),
  accountExists: prepare<{ found: number }>(`SELECT 1 AS found FROM gateway.accounts WHERE id = $1`),
  createKey: prepare(
    `INSERT INTO gateway.api_keys (id, account_id, secret_hash, scopes) VALUES ($1, $2, $3, $4)`,
  ),
  listKeys: prepare<KeyRow>(
    `SELECT id, account_id, scopes, created_at, revoked_at FROM gateway.api_keys
      WHERE account_id = $1 ORDER BY created_at, id`,
  ),
  revokeKey: prepare(`UPDATE gateway.api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`),
  setScopes: prepare(`UPDATE gateway.api_keys SET scopes = $2 WHERE id = $1 AND revoked_at IS NULL`),
  findKey: prepare<{
    account_id: string;
    plan: Plan;
    secret_hash: Buffer;
    revoked: boolean;
    scopes: Scope[];
  }>(
    `SELECT k.account_id, a.plan, k.secret_hash, k.revoked_at IS NOT NULL AS revoked, k.scopes
       FROM gateway.api_keys k JOIN gateway.accounts a ON a.id = k.account_id
      WHERE k.id = $1`,
  ),
};

const toAccountRecord = (row: AccountRow): AccountRecord => ({
  ...row,
  created_at: new Date(row.created_at).toISOString(),
});

/** Accounts and their API keys, in the gateway's own schema. */
export class AccountsRepository {
  constructor(private readonly db: DataSource) {}

  async createAccount(name: string, plan: Plan): Promise<AccountRecord> {
    const {
      rows: [row],
    } = await execute(this.db, SQL.createAccount, [randomUUID(), name, plan]);
    return toAccountRecord(row);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    const { rows } = await execute(this.db, SQL.listAccounts);
    return rows.map(toAccountRecord);
  }

  /** Returns false when the account does not exist. */
  async setPlan(accountId: string, plan: Plan): Promise<boolean> {
    const { rowCount } = await execute(this.db, SQL.setPlan, [accountId, plan]);
    return rowCount > 0;
  }

  async accountExists(accountId: string): Promise<boolean> {
    const { rowCount } = await execute(this.db, SQL.accountExists, [accountId]);
    return rowCount > 0;
  }

  /** Creates a key and returns it in full: the only time the secret is ever seen. */
  async createKey(
    accountId: string,
    scopes: readonly Scope[] = SCOPES,
  ): Promise<{ keyId: string; apiKey: string; scopes: Scope[] }> {
    const { keyId, apiKey, secretHash } = generateApiKey();
    await execute(this.db, SQL.createKey, [keyId, accountId, secretHash, scopes]);
    return { keyId, apiKey, scopes: [...scopes] };
  }

  /** The account's keys, oldest first, revoked ones included. */
  async listKeys(accountId: string): Promise<KeySummary[]> {
    const { rows } = await execute(this.db, SQL.listKeys, [accountId]);
    return rows.map((row) => ({
      keyId: row.id,
      accountId: row.account_id,
      scopes: row.scopes,
      createdAt: new Date(row.created_at).toISOString(),
      revokedAt: row.revoked_at && new Date(row.revoked_at).toISOString(),
    }));
  }

  /** Returns false when no such (unrevoked) key exists. */
  async revokeKey(keyId: string): Promise<boolean> {
    const { rowCount } = await execute(this.db, SQL.revokeKey, [keyId]);
    return rowCount > 0;
  }

  /** Replaces a key's scopes; returns false when no such (unrevoked) key exists. */
  async setScopes(keyId: string, scopes: readonly Scope[]): Promise<boolean> {
    const { rowCount } = await execute(this.db, SQL.setScopes, [keyId, scopes]);
    return rowCount > 0;
  }

  async findKey(keyId: string): Promise<KeyRecord | undefined> {
    const {
      rows: [row],
    } = await execute(this.db, SQL.findKey, [keyId]);
    if (!row) return undefined;
    return {
      accountId: row.account_id,
      plan: row.plan,
      secretHash: row.secret_hash,
      revoked: row.revoked,
      scopes: row.scopes,
    };
  }
}

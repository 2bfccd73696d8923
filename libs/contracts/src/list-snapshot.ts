import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * The snapshot a paged list is read at: Postgres's own `pg_snapshot` text (`xmin:xmax:xip,...`).
 * A row belongs to the list iff the transaction that created it is visible in that snapshot, so
 * offsets stay stable while others create conversations, including transactions that were still
 * in flight when the first page was read.
 *
 * Clients never see it: transaction ids are database-wide, so watching them
 * advance would tell any tenant how much all tenants write. They get a token sealed with
 * AES-256-GCM under a key of the conversations service (kept in its schema, the same for every
 * replica), bound to their account: opaque, tamper-evident, and meaningless in another account.
 * Token bytes: key id (1), IV (12), ciphertext, GCM tag (16); base64url.
 */
const PG_SNAPSHOT = /^(\d{1,19}):(\d{1,19}):((?:\d{1,19})(?:,\d{1,19})*)?$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Key id, IV, at least one byte of snapshot, tag: 30 bytes are 40 base64url characters. */
const TOKEN = /^[A-Za-z0-9_-]{40,4096}$/;

export function isPgSnapshot(text: string): boolean {
  const match = PG_SNAPSHOT.exec(text);
  if (!match) return false;
  const xmin = BigInt(match[1]);
  const xmax = BigInt(match[2]);
  const inProgress = match[3] ? match[3].split(',').map(BigInt) : [];
  return xmin > 0n && xmin <= xmax && inProgress.every((xid) => xid >= xmin && xid < xmax);
}

/** Whether `token` has the shape of a sealed snapshot (what the gateway can check without the key). */
export function isSnapshotToken(token: string): boolean {
  return TOKEN.test(token);
}

/** What a sealed token is for: one sealed for a purpose opens for no other. */
export type SealPurpose = 'list-snapshot' | 'events-cursor' | 'messages-cursor';

/**
 * Seals pg_snapshots (and the API's cursors, docs/api-conventions.md "Cursors") into
 * account-bound tokens and opens them; `keys` by id (1-255), the highest seals. A `scope` (the
 * conversation a messages cursor pages through) binds a token further: it opens in that scope only.
 */
export class SnapshotSealer {
  private readonly currentKeyId: number;

  constructor(private readonly keys: ReadonlyMap<number, Buffer>) {
    if (keys.size === 0) throw new Error('no list snapshot key');
    this.currentKeyId = Math.max(...keys.keys());
  }

  seal(snapshot: string, accountId: string): string {
    return this.sealAs(snapshot, accountId, 'list-snapshot');
  }

  /** The pg_snapshot inside `token`, or undefined if it was not sealed by us for this account. */
  open(token: string, accountId: string): string | undefined {
    const snapshot = this.openAs(token, accountId, 'list-snapshot');
    return snapshot !== undefined && isPgSnapshot(snapshot) ? snapshot : undefined;
  }

  /** Seals `text` for one account and one purpose (and `scope`, if given): it opens for those only. */
  sealAs(text: string, accountId: string, purpose: SealPurpose, scope?: string): string {
    const iv = randomBytes(IV_BYTES);
    const keyId = Buffer.of(this.currentKeyId);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv);
    cipher.setAAD(associatedData(purpose, keyId, accountId, scope));
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([keyId, iv, sealed, cipher.getAuthTag()]).toString('base64url');
  }

  /** The text sealed in `token`, or undefined if not sealed by us for this account, purpose and scope. */
  openAs(token: string, accountId: string, purpose: SealPurpose, scope?: string): string | undefined {
    if (!isSnapshotToken(token)) return undefined;
    const bytes = Buffer.from(token, 'base64url');
    const key = this.keys.get(bytes[0]);
    if (!key || bytes.length < 1 + IV_BYTES + 1 + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(associatedData(purpose, bytes.subarray(0, 1), accountId, scope));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      return undefined; // tampered, another account's, purpose's or scope's, or another key's
    }
  }
}

function associatedData(purpose: SealPurpose, keyId: Buffer, accountId: string, scope?: string): Buffer {
  const bound = scope === undefined ? `:${accountId}` : `:${accountId}:${scope}`;
  return Buffer.concat([Buffer.from(`${purpose}:`), keyId, Buffer.from(bound)]);
}

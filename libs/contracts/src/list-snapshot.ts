/**
 * The snapshot a paged list is read at: Postgres's own `pg_snapshot` text (`xmin:xmax:xip,...`).
 * A row belongs to the list iff the transaction that created it is visible in that snapshot, so
 * offsets stay stable while others create conversations, including transactions that were still
 * in flight when the first page was read. Clients see it base64url-encoded, as an opaque token.
 */
const PG_SNAPSHOT = /^(\d{1,19}):(\d{1,19}):((?:\d{1,19})(?:,\d{1,19})*)?$/;

export function isPgSnapshot(text: string): boolean {
  const match = PG_SNAPSHOT.exec(text);
  if (!match) return false;
  const xmin = BigInt(match[1]);
  const xmax = BigInt(match[2]);
  const inProgress = match[3] ? match[3].split(',').map(BigInt) : [];
  return xmin > 0n && xmin <= xmax && inProgress.every((xid) => xid >= xmin && xid < xmax);
}

export function encodeSnapshotToken(snapshot: string): string {
  return Buffer.from(snapshot, 'utf8').toString('base64url');
}

/** The pg_snapshot inside a client's token, or undefined if the token is not one of ours. */
export function decodeSnapshotToken(token: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(token)) return undefined;
  const snapshot = Buffer.from(token, 'base64url').toString('utf8');
  return isPgSnapshot(snapshot) ? snapshot : undefined;
}

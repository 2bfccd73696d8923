import { randomBytes, randomUUID } from 'node:crypto';
import { isPgSnapshot, isSnapshotToken, SnapshotSealer } from './list-snapshot';
import { MESSAGE_CURSOR } from './conversation-requests';

describe('list snapshot tokens', () => {
  const account = randomUUID();
  const sealer = new SnapshotSealer(new Map([[1, randomBytes(32)]]));
  const snapshot = '552799:552810:552801,552805';

  it('opens what it sealed, for the same account', () => {
    const token = sealer.seal(snapshot, account);
    expect(isSnapshotToken(token)).toBe(true);
    expect(sealer.open(token, account)).toBe(snapshot);
  });

  it('is opaque: no transaction id shows, and two seals of one snapshot differ', () => {
    const tokens = [sealer.seal(snapshot, account), sealer.seal(snapshot, account)];
    expect(tokens[0]).not.toBe(tokens[1]);
    for (const token of tokens) {
      expect(token).not.toContain('552');
      expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('552799');
    }
  });

  it('is meaningless in another account', () => {
    expect(sealer.open(sealer.seal(snapshot, account), randomUUID())).toBeUndefined();
  });

  it('opens a token only for the purpose it was sealed for', () => {
    const cursor = sealer.sealAs('2026-11-26T06:28:02.350Z.6714', account, 'events-cursor');
    expect(sealer.openAs(cursor, account, 'events-cursor')).toBe('2026-11-26T06:28:02.350Z.6714');
    expect(sealer.open(cursor, account)).toBeUndefined();
    expect(sealer.openAs(sealer.seal(snapshot, account), account, 'events-cursor')).toBeUndefined();
  });

  it('opens a token sealed for a scope in that scope only', () => {
    const [conversation, sibling] = [randomUUID(), randomUUID()];
    const cursor = sealer.sealAs('asc.4', account, 'messages-cursor', conversation);
    expect(sealer.openAs(cursor, account, 'messages-cursor', conversation)).toBe('asc.4');
    expect(sealer.openAs(cursor, account, 'messages-cursor', sibling)).toBeUndefined();
    expect(sealer.openAs(cursor, account, 'messages-cursor')).toBeUndefined();
    expect(sealer.openAs(cursor, randomUUID(), 'messages-cursor', conversation)).toBeUndefined();
    const longest = sealer.sealAs('desc.2147483647', account, 'messages-cursor', conversation);
    expect(longest.length).toBeLessThanOrEqual(MESSAGE_CURSOR.maxLength!);
  });

  it('refuses any change to any byte', () => {
    const bytes = Buffer.from(sealer.seal(snapshot, account), 'base64url');
    for (let i = 0; i < bytes.length; i += 1) {
      const tampered = Buffer.from(bytes);
      tampered[i] ^= 0x01;
      expect({ i, opened: sealer.open(tampered.toString('base64url'), account) }).toEqual({
        i,
        opened: undefined,
      });
    }
  });

  it("refuses another key's token, and keeps opening older keys' tokens after a new key is added", () => {
    const oldKey = randomBytes(32);
    const before = new SnapshotSealer(new Map([[1, oldKey]]));
    const stranger = new SnapshotSealer(new Map([[1, randomBytes(32)]]));
    const token = before.seal(snapshot, account);
    expect(stranger.open(token, account)).toBeUndefined();
    const rotated = new SnapshotSealer(
      new Map([
        [1, oldKey],
        [2, randomBytes(32)],
      ]),
    );
    expect(rotated.open(token, account)).toBe(snapshot);
    expect(Buffer.from(rotated.seal(snapshot, account), 'base64url')[0]).toBe(2);
  });

  it.each([
    ['a raw pg_snapshot', '552799:552799:'],
    ['a base64url pg_snapshot (the old tokens)', Buffer.from('552799:552799:').toString('base64url')],
    ['a short word', 'yesterday'],
    ['not base64url', `${'a'.repeat(40)}+/=`],
    ['empty', ''],
  ])('refuses %s', (_name, token) => {
    expect(sealer.open(token, account)).toBeUndefined();
  });

  it('does not seal something that is not a pg_snapshot into something that opens', () => {
    expect(sealer.open(sealer.seal('not a snapshot', account), account)).toBeUndefined();
    expect(isPgSnapshot('5:3:')).toBe(false);
    expect(isPgSnapshot('10:20:25')).toBe(false);
    expect(isPgSnapshot('10:20:15')).toBe(true);
  });
});

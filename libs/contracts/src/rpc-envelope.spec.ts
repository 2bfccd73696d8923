import { ConversationPage } from './conversation-views';
import { compileSerializer } from './json-serializer';
import { encodeOkReply, okReplyData, type RpcReply } from './rpc-envelope';

const page = {
  data: [],
  pagination: { limit: 20, offset: 0, total: 0, snapshot: 'NzY4Ojc3MDo3Njk' },
};

describe('RPC reply envelope', () => {
  it('writes a successful reply as the JSON of an RpcReply whose data is the serializer’s bytes', () => {
    const data = compileSerializer(ConversationPage)(page);
    const wire = Buffer.from(encodeOkReply(data));
    expect(JSON.parse(wire.toString())).toEqual({ ok: true, data: page });
    expect(okReplyData(wire)?.toString()).toBe(data);
  });

  it('gives no data for a failed reply, for JSON of another form and for other bytes', () => {
    const failed: RpcReply = { ok: false, error: { code: 'not_found', detail: 'No such conversation.' } };
    for (const other of [
      JSON.stringify(failed),
      JSON.stringify({ data: page, ok: true }), // an RpcReply all the same, but not encodeOkReply's
      '{"ok":true,"data":',
      '',
    ]) {
      expect(okReplyData(Buffer.from(other))).toBeUndefined();
    }
  });
});

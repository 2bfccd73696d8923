import { replyNodeOf } from './direct-replies';

/** The address of a pid term: `tag` the pid's (88 NEW_PID_EXT, 103 PID_EXT), then the node atom's bytes. */
const address = (pidTag: number, atom: number[]) =>
  `amq.rabbitmq.reply-to.${Buffer.from([131, pidTag, ...atom, ...new Array(12).fill(0)]).toString('base64')}.key`;
const text = (value: string) => [...Buffer.from(value)];

describe('replyNodeOf', () => {
  it('reads the node of an address RabbitMQ 3.10 wrote (taken from a broker log)', () => {
    expect(
      replyNodeOf(
        'amq.rabbitmq.reply-to.g1h2AA9yZXBseUAxMzIzODM3NjQAABJCAAAAAGsJK5Y=.iQCrItzw4llIvdiGLH3B+w==',
      ),
    ).toBe('reply@132383764');
  });

  it.each([
    ['ATOM_UTF8_EXT', [118, 0, 6, ...text('rabbit')]],
    ['SMALL_ATOM_UTF8_EXT', [119, 6, ...text('rabbit')]],
    ['ATOM_EXT', [100, 0, 6, ...text('rabbit')]],
    ['SMALL_ATOM_EXT', [115, 6, ...text('rabbit')]],
  ])('reads a node written as %s, in a NEW_PID_EXT or a PID_EXT', (_, atom) => {
    expect(replyNodeOf(address(88, atom))).toBe('rabbit');
    expect(replyNodeOf(address(103, atom))).toBe('rabbit');
  });

  it.each([
    ['a queue name', 'amq.gen-9kc0Ys60YgkSmikGp-OyaQ'],
    ['the pseudo-queue itself', 'amq.rabbitmq.reply-to'],
    ['no term', 'amq.rabbitmq.reply-to..key'],
    ['another term than a pid', address(104, [118, 0, 1, 97])],
    ['an unknown atom tag', address(88, [107, 0, 1, 97])],
    ['a node longer than the term', address(88, [118, 0, 200, 97])],
  ])('is undefined for %s', (_, replyTo) => {
    expect(replyNodeOf(replyTo)).toBeUndefined();
  });
});

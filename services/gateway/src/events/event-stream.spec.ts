import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { EventView } from '@app/contracts';
import { EventStream } from './event-stream';

/** A response that records frames and reports its buffer full when `full` is set. */
class FakeResponse extends EventEmitter {
  frames: string[] = [];
  headersSent = false;
  writableEnded = false;
  full = false;
  socket = null;
  writeHead() {
    this.headersSent = true;
  }
  write(frame: string) {
    this.frames.push(frame);
    return !this.full;
  }
  end(callback?: () => void) {
    this.writableEnded = true;
    callback?.();
  }
  get ids() {
    return this.frames.flatMap((frame) => /^id: (.+)$/m.exec(frame)?.[1] ?? []);
  }
}

const event = (n: number): EventView => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  type: 'message.sent',
  created_at: '2026-11-24T10:00:00.000Z',
  conversation_id: '0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b',
  sequence: n,
  data: {},
});

function open(bufferLimit = 5) {
  const response = new FakeResponse();
  const closed: EventStream[] = [];
  const stream = new EventStream(
    'account',
    'key',
    'en',
    response as unknown as ServerResponse,
    { heartbeatMs: 60_000, bufferLimit },
    (s) => closed.push(s),
  );
  stream.start({});
  return { response, stream, closed };
}

describe('EventStream', () => {
  it('sends the backlog, then the held live events it did not have, then live ones, each once', () => {
    const { response, stream } = open();
    stream.deliver(event(3)); // live while the backlog is read: also in the backlog
    stream.deliver(event(4));
    stream.sendBacklog([event(1), event(2), event(3)]);
    stream.goLive();
    stream.deliver(event(5));
    expect(response.ids).toEqual([1, 2, 3, 4, 5].map((n) => event(n).id));
    stream.close();
  });

  it('renders the type in its dialect and the event as data', () => {
    const response = new FakeResponse();
    const stream = new EventStream(
      'account',
      'key',
      'ms',
      response as unknown as ServerResponse,
      {
        heartbeatMs: 60_000,
        bufferLimit: 5,
      },
      () => undefined,
    );
    stream.start({});
    stream.goLive();
    stream.deliver(event(1));
    const frame = response.frames.find((f) => f.startsWith('id:'))!;
    expect(frame).toBe(
      `id: ${event(1).id}\nevent: mesej.dihantar\ndata: ${JSON.stringify({ ...event(1), type: 'mesej.dihantar' })}\n\n`,
    );
    stream.close();
  });

  it('closes a stream whose client stopped reading once it is bufferLimit events behind', () => {
    const { response, stream, closed } = open(5);
    stream.goLive();
    response.full = true;
    for (let n = 1; n <= 10; n++) stream.deliver(event(n));
    expect(closed).toEqual([stream]);
    expect(response.writableEnded).toBe(true);
    expect(response.ids.length).toBeLessThanOrEqual(7);
  });

  it('keeps a client that catches up (drain) open', () => {
    const { response, stream, closed } = open(5);
    stream.goLive();
    for (let round = 0; round < 4; round++) {
      response.full = true;
      for (let n = 1; n <= 4; n++) stream.deliver(event(round * 4 + n));
      response.full = false;
      response.emit('drain');
    }
    expect(closed).toEqual([]);
    expect(response.ids).toHaveLength(16);
    stream.close();
  });

  it('closes a stream that holds more than bufferLimit live events while its backlog is read', () => {
    const { stream, closed } = open(5);
    for (let n = 1; n <= 6; n++) stream.deliver(event(n));
    expect(closed).toEqual([stream]);
  });
});

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Records one response once it has ended: its log line, its metrics. */
export type ResponseRecorder = (request: FastifyRequest, reply: FastifyReply) => void;

declare module 'fastify' {
  interface FastifyInstance {
    responseRecorders: ResponseRecorder[];
  }
  interface FastifyRequest {
    /** Set on a response its handler streams (the event stream): what it sent, for its records. */
    streamed?: { readonly eventsSent: number };
  }
}

/**
 * Runs `recorder` for every response, however it ends. Fastify's onResponse hooks run when a
 * response finishes; a response its handler writes itself (an event stream) and whose client
 * leaves first never finishes, and recordUnfinishedResponse runs the same recorders for it.
 */
export function addResponseRecorder(fastify: FastifyInstance, recorder: ResponseRecorder): void {
  if (!fastify.hasDecorator('responseRecorders')) fastify.decorate('responseRecorders', []);
  fastify.responseRecorders.push(recorder);
  fastify.addHook('onResponse', (request, reply, done) => {
    recorder(request, reply);
    done();
  });
}

/** For a response its handler writes itself: records it when it closes without finishing. */
export function recordWhenClosed(request: FastifyRequest, reply: FastifyReply): void {
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) return; // finished: the onResponse hooks recorded it
    for (const recorder of reply.server.responseRecorders ?? []) recorder(request, reply);
  });
}

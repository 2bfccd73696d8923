import { Client } from 'pg';

const READ_TIMEOUT = 'Query read timeout';

/**
 * A pg Client that ends its connection when a query gets no answer within `query_timeout` (a
 * stalled network or server): node-postgres reports the timeout but keeps the connection, whose
 * unanswered query would then block every later one. Ended, it leaves the pool. A connection
 * lost between queries never ends the process (below).
 */
export class BoundedClient extends Client {
  constructor(...args: ConstructorParameters<typeof Client>) {
    super(...args);
    // A server's FATAL message or a lost socket while no query runs is emitted as 'error'. The
    // pool listens while the client is idle and TypeORM while a query runner holds it, but not in
    // between (a client checked out, released with an error, or ending): an 'error' with no
    // listener is thrown and ends the process. The error is not lost: the client is then not
    // queryable, its holder's next query fails as a lost connection, and the pool drops it.
    this.on('error', () => undefined);
  }

  // pg's Client.query has a dozen overloads (promise and callback forms); an override must
  // accept and return what each of them does, which only `any` expresses.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: unknown[]): any {
    const callback = args[args.length - 1];
    if (typeof callback === 'function') {
      const done = callback as (error: Error | null, result: unknown) => void;
      args[args.length - 1] = (error: Error | null, result: unknown) => {
        if (error) this.endAfterTimeout(error);
        done(error, result);
      };
    }
    const result = (super.query as (...queryArgs: unknown[]) => unknown)(...args);
    if (result instanceof Promise) result.catch((error: Error) => this.endAfterTimeout(error));
    return result;
  }

  private endAfterTimeout(error: Error): void {
    // end() destroys the socket when a query is still active; no 'error' event follows.
    if (error?.message === READ_TIMEOUT) void this.end().catch(() => undefined);
  }
}

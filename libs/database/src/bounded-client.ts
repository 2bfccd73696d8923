import { Client } from 'pg';

const READ_TIMEOUT = 'Query read timeout';

/**
 * A pg Client that ends its connection when a query gets no answer within `query_timeout` (a
 * stalled network or server): node-postgres reports the timeout but keeps the connection, whose
 * unanswered query would then block every later one. Ended, it leaves the pool.
 */
export class BoundedClient extends Client {
  override query(...args: unknown[]): any {
    const callback = args[args.length - 1];
    if (typeof callback === 'function') {
      args[args.length - 1] = (error: Error | null, result: unknown) => {
        if (error) this.endAfterTimeout(error);
        callback(error, result);
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

import { Client } from 'pg';

const READ_TIMEOUT = 'Query read timeout';

/**
 * A pg Client that ends its connection when a query gets no answer within `query_timeout` (a
 * stalled network or server): node-postgres reports the timeout but keeps the connection, whose
 * unanswered query would then block every later one. Ended, it leaves the pool.
 */
export class BoundedClient extends Client {
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

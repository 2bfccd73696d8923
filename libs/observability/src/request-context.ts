import { AsyncLocalStorage } from 'node:async_hooks';

/** Who a piece of work is for; every log line written inside it carries these fields. */
export interface RequestContext {
  request_id: string;
  account_id?: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

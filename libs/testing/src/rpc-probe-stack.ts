import { randomUUID } from 'node:crypto';
import type { RpcRequest } from '@app/contracts';
import { RpcProbe } from './rpc-probe';
import { StackOptions, TestAccount, TestStack } from './test-stack';

/** A command as the gateway builds one: a fresh command id unless given, and a request id. */
export function rpcRequest(
  accountId: string,
  pattern: string,
  data: unknown,
  commandId: string = randomUUID(),
): RpcRequest {
  return { pattern, commandId, requestId: `req-${randomUUID()}`, accountId, data };
}

export interface RpcProbeStack {
  readonly stack: TestStack;
  readonly probe: RpcProbe;
  /** The account the stack was started with; rpcRequest for it. */
  readonly account: TestAccount;
}

/**
 * For the describe block it is called in: a test stack, an RpcProbe on the conversations
 * service's queue and one account, opened before the block's tests and closed after them.
 * Read the fields inside tests (they are set by beforeAll).
 */
export function useRpcProbeStack(options: StackOptions = {}): RpcProbeStack {
  let stack: TestStack | undefined;
  let probe: RpcProbe | undefined;
  let account: TestAccount | undefined;
  beforeAll(async () => {
    stack = await TestStack.start(options);
    probe = await RpcProbe.open();
    account = await stack.createAccount();
  });
  afterAll(async () => {
    await probe?.close();
    await stack?.close();
  });
  return {
    get stack() {
      return opened(stack);
    },
    get probe() {
      return opened(probe);
    },
    get account() {
      return opened(account);
    },
  };
}

function opened<T>(value: T | undefined): T {
  if (value === undefined)
    throw new Error('the RPC probe stack is opened by beforeAll: read it inside tests');
  return value;
}

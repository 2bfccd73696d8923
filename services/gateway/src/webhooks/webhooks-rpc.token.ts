/** The RpcClient on `webhooks.rpc` (the class token itself is the conversations service's). */
export const WEBHOOKS_RPC = Symbol('WEBHOOKS_RPC');

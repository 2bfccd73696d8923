/** Injection token of the gateway's validated configuration. */
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

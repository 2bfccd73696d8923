import type { FastifyReply } from 'fastify';
import type { LimitDecision } from './sliding-window-limiter';

const POLICY_NAME = 'hourly';

/**
 * Seconds from now until a slot frees: when the oldest counted request leaves the window (0 if
 * none is counted), or later if the account is over a lowered limit.
 */
export function secondsUntilSlotFrees(decision: LimitDecision): number {
  return Math.max(0, Math.ceil((decision.slotFreeAtMs - decision.nowMs) / 1000));
}

/**
 * The headers of docs/rate-limits.md on every authenticated response: the IETF RateLimit-Policy/RateLimit
 * pair and the X-RateLimit-* trio clients already know from GitHub and Stripe.
 */
export function setRateLimitHeaders(
  reply: FastifyReply,
  decision: LimitDecision,
  windowSeconds: number,
): void {
  const wait = secondsUntilSlotFrees(decision);
  reply.header('ratelimit-policy', `"${POLICY_NAME}";q=${decision.limit};w=${windowSeconds}`);
  reply.header('ratelimit', `"${POLICY_NAME}";r=${decision.remaining};t=${wait}`);
  reply.header('x-ratelimit-limit', String(decision.limit));
  reply.header('x-ratelimit-remaining', String(decision.remaining));
  reply.header('x-ratelimit-reset', String(Math.ceil(decision.resetAtMs / 1000)));
  if (!decision.admitted) reply.header('retry-after', String(Math.max(1, wait)));
}

/**
 * Bucketed sliding-window limiter, one atomic call per request.
 *
 * The window (W ms) is divided into buckets of B ms; a hash per subject holds one counter per
 * bucket index (index = floor(time / B)), so memory is at most W/B + 1 small fields per subject
 * whatever the limit. A request at time t counts every bucket from floor((t - W) / B) on: the
 * oldest, partly expired bucket is counted whole, which never admits more than the limit in any
 * window ending at a request, and under-admits by at most that one bucket's requests for at most
 * B ms. Rejected requests are not counted. Time is Redis's own clock, shared by all gateways.
 *
 * KEYS[1] subject hash; ARGV[1] limit, ARGV[2] window ms, ARGV[3] bucket ms.
 * Returns {admitted 0|1, remaining, reset_ms (when the oldest counted request leaves), now_ms}.
 */
export const SLIDING_WINDOW_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local bucket = tonumber(ARGV[3])
local current = math.floor(now / bucket)
local first_counted = math.floor((now - window) / bucket)
local fields = redis.call('HGETALL', KEYS[1])
local total = 0
local oldest = nil
for i = 1, #fields, 2 do
  local index = tonumber(fields[i])
  if index < first_counted then
    redis.call('HDEL', KEYS[1], fields[i])
  else
    total = total + tonumber(fields[i + 1])
    if oldest == nil or index < oldest then oldest = index end
  end
end
local admitted = 0
if total < limit then
  redis.call('HINCRBY', KEYS[1], current, 1)
  total = total + 1
  admitted = 1
  if oldest == nil then oldest = current end
end
redis.call('PEXPIRE', KEYS[1], window + bucket)
local reset = now
if oldest ~= nil then reset = (oldest + 1) * bucket + window end
return {admitted, limit - total, reset, now}
`;

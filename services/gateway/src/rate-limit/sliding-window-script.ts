/**
 * Bucketed sliding-window limiter: one atomic call counts a group of requests for one subject
 * (those that reached a gateway in the same turn of its event loop), as if they came one by one.
 *
 * The window (W ms) is divided into buckets of B ms; a hash per subject holds one counter per
 * bucket index (index = floor(time / B)), so memory is at most W/B + 1 small fields per subject
 * whatever the limit. A request at time t counts every bucket from floor((t - W) / B) on: the
 * oldest, partly expired bucket is counted whole, which never admits more than the limit in any
 * window ending at a request, and under-admits by at most that one bucket's requests for at most
 * B ms. Rejected requests are not counted. Time is Redis's own clock, shared by all gateways.
 *
 * KEYS[1] subject hash; KEYS[2] plan override (a plan name, set briefly when a plan changes);
 * ARGV[1] limit, ARGV[2] window ms, ARGV[3] bucket ms, ARGV[4] JSON of the limit per plan name,
 * ARGV[5] deadline (Redis ms; 0: none): a call that runs after it (its callers gave up waiting)
 * changes nothing and returns admitted = -1; ARGV[6] the number of requests in the group.
 * Returns {admitted (how many of the group, the first ones, are admitted), remaining after them,
 * reset_ms (when the oldest counted request leaves), now_ms, free_ms (when the count next drops
 * below the limit: later than reset_ms only after a downgrade), limit, count before the group}.
 */
export const SLIDING_WINDOW_SCRIPT = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local deadline = tonumber(ARGV[5])
if deadline > 0 and now > deadline then return {-1, 0, 0, now, 0, 0, 0} end
local requests = tonumber(ARGV[6])
local limit = tonumber(ARGV[1])
local plan = redis.call('GET', KEYS[2])
if plan then
  local quota = cjson.decode(ARGV[4])[plan]
  if quota then limit = tonumber(quota) end
end
local window = tonumber(ARGV[2])
local bucket = tonumber(ARGV[3])
local current = math.floor(now / bucket)
local first_counted = math.floor((now - window) / bucket)
local fields = redis.call('HGETALL', KEYS[1])
local total = 0
local counted = {}
for i = 1, #fields, 2 do
  local index = tonumber(fields[i])
  if index < first_counted then
    redis.call('HDEL', KEYS[1], fields[i])
  else
    local n = tonumber(fields[i + 1])
    total = total + n
    counted[#counted + 1] = {index, n}
  end
end
table.sort(counted, function(a, b) return a[1] < b[1] end)
local oldest = nil
if #counted > 0 then oldest = counted[1][1] end
local leaves = function(index) return (index + 1) * bucket + window end
local before = total
local admitted = math.max(0, math.min(requests, limit - total))
if admitted > 0 then
  redis.call('HINCRBY', KEYS[1], current, admitted)
  total = total + admitted
  if oldest == nil then oldest = current end
end
redis.call('PEXPIRE', KEYS[1], window + bucket)
local reset = now
if oldest ~= nil then reset = leaves(oldest) end
-- Over the limit (a plan was lowered), several buckets may have to leave before a slot frees.
local free = reset
local left = total
for _, entry in ipairs(counted) do
  if left < limit then break end
  left = left - entry[2]
  free = leaves(entry[1])
end
return {admitted, limit - total, reset, now, free, limit, before}
`;

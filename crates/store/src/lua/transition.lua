-- Moves a match to a new status if it is in one of the expected ones
-- (compare-and-set), with its reason, server, result and answers, and sets or
-- clears when its saga's next step is due.
-- A result for the rating service is queued in the same step, so a result that was
-- acknowledged is never lost before it is applied.
-- KEYS: 1 lifecycle hash, 2 due zset, 3 results hash, 4 results zset
-- ARGV: 1 match id, 2 expected statuses (comma-separated), 3 new status, 4 reason,
--       5 server JSON, 6 result JSON (each '' to leave as is), 7 due time ('' none),
--       8 rating job JSON ('' none), then pairs: player, 'a' or 'd'
-- Returns 1 if applied, 0 otherwise.
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return 0 end
local ok = false
for s in string.gmatch(ARGV[2], '[^,]+') do
  if s == st then ok = true end
end
if not ok then return 0 end
redis.call('HSET', KEYS[1], 'st', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'why', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'srv', ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'res', ARGV[6]) end
if ARGV[8] ~= '' then
  -- Scored by when it was queued: consumers claim the oldest first.
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[8])
  redis.call('ZADD', KEYS[4], now_ms(), ARGV[1])
end
for i = 9, #ARGV, 2 do
  redis.call('HSET', KEYS[1], 'a:' .. ARGV[i], ARGV[i + 1])
end
if ARGV[7] ~= '' then
  redis.call('ZADD', KEYS[2], ARGV[7], ARGV[1])
else
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1

-- Claims up to ARGV[2] finished matches' results for a rating consumer: the ones
-- nobody holds, or whose holder's lease ran out (it died mid-batch). Each stays
-- stored until acknowledged, so a consumer that dies leaves its work to another.
-- Oldest first: a result is scored by when it was queued, and a claimed one by
-- when its holder's lease runs out.
-- KEYS: 1 results hash (match id -> job JSON), 2 results zset (match id -> when
--       it may be claimed, ms on the Redis clock)
-- ARGV: 1 lease ms, 2 max
-- Returns the claimed jobs' JSON.
local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
local held = now + tonumber(ARGV[1])
for _, id in ipairs(ids) do
  local job = redis.call('HGET', KEYS[1], id)
  if job then
    redis.call('ZADD', KEYS[2], held, id)
    out[#out + 1] = job
  else
    redis.call('ZREM', KEYS[2], id)
  end
end
return out

-- Takes a ticket's entry out of play in one pool because the matchmaker placed one
-- of its players elsewhere. A queued entry leaves the queue; a held one is marked
-- so its worker cannot commit it and its release drops it; an entry not written yet
-- gets the withdrawn state first, so its enqueue does not queue it. Finished entries
-- are left alone. Idempotent.
-- KEYS: 1 queue zset, 2 state hash, 3 done zset, 4 ticket data hash
-- ARGV: 1 ticket id, 2 reason
-- Returns {previous state or '', ticket JSON if a live entry was withdrawn}.
local s = redis.call('HGET', KEYS[2], ARGV[1])
local kind = s and string.sub(s, 1, 2)
if s == 'c' or kind == 'm:' or kind == 'w:' or kind == 't:' then
  return {s}
end
if s then redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('HSET', KEYS[2], ARGV[1], 'w:' .. ARGV[2])
redis.call('ZADD', KEYS[3], now_ms(), ARGV[1])
if not s then return {''} end
return {s, redis.call('HGET', KEYS[4], ARGV[1]) or ''}

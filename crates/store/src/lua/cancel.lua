-- Cancels a ticket's entry in one pool unless it is already in a match. An entry
-- held by a worker is marked cancelled; the worker's complete skips it and its
-- release drops it.
-- KEYS: 1 queue zset, 2 state hash, 3 done zset
-- ARGV: 1 ticket id, 2 (optional) the reason the matchmaker withdraws it for
-- (the entry reads as cancelled with that reason), 3 (optional) 't': it ends
-- as timed out with that reason instead
-- Returns {outcome, detail}: {'missing'}, {'cancelled', 'already'},
-- {'withdrawn', reason}, {'matched', match id}, or {'cancelled', previous state}.
local s = redis.call('HGET', KEYS[2], ARGV[1])
if not s then return {'missing'} end
if s == 'c' then return {'cancelled', 'already'} end
if string.sub(s, 1, 2) == 'm:' then return {'matched', string.sub(s, 3)} end
if string.sub(s, 1, 2) == 'w:' or string.sub(s, 1, 2) == 't:' then
  return {'withdrawn', string.sub(s, 3)}
end
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[3] == 't' then
  redis.call('HSET', KEYS[2], ARGV[1], 't:' .. ARGV[2])
elseif ARGV[2] and ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[1], 'w:' .. ARGV[2])
else
  redis.call('HSET', KEYS[2], ARGV[1], 'c')
end
redis.call('ZADD', KEYS[3], now_ms(), ARGV[1])
return {'cancelled', s}

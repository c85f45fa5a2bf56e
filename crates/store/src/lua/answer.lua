-- Records a player's ready-check answer. A decline cancels the match at once; the
-- last accept moves it to its next status (field 'nx': placing, or completed
-- without placement). Either
-- makes the match due so its saga takes the next step. Refused once the match left
-- the ready check or its deadline passed (the expiry is the supervisor's to apply).
-- KEYS: 1 lifecycle hash, 2 due zset
-- ARGV: 1 match id, 2 player, 3 'a' accept or 'd' decline, 4 delay before placement
--       is due (ms)
-- Returns {'missing'}, {'closed', status}, {'declined'}, {'accepted', n, total} or
-- {'all', status, total}.
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'missing'} end
if st ~= 'requires_acceptance' then return {'closed', st} end
local now = now_ms()
local dl = redis.call('HGET', KEYS[1], 'dl')
if dl and now > tonumber(dl) then return {'closed', st} end
local field = 'a:' .. ARGV[2]
local total = tonumber(redis.call('HGET', KEYS[1], 'n'))
if ARGV[3] == 'd' then
  if redis.call('HGET', KEYS[1], field) == 'a' then redis.call('HINCRBY', KEYS[1], 'na', -1) end
  redis.call('HSET', KEYS[1], field, 'd', 'st', 'cancelled', 'why', 'declined')
  redis.call('ZADD', KEYS[2], now, ARGV[1])
  return {'declined'}
end
redis.call('HDEL', KEYS[1], 'g:' .. ARGV[2])
if redis.call('HGET', KEYS[1], field) == 'a' then
  return {'accepted', tonumber(redis.call('HGET', KEYS[1], 'na') or 0), total}
end
redis.call('HSET', KEYS[1], field, 'a')
local na = redis.call('HINCRBY', KEYS[1], 'na', 1)
if na < total then return {'accepted', na, total} end
local next_status = redis.call('HGET', KEYS[1], 'nx')
redis.call('HSET', KEYS[1], 'st', next_status)
if next_status == 'placing' then
  redis.call('HSET', KEYS[1], 'ps', now)
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
else
  redis.call('ZADD', KEYS[2], now, ARGV[1])
end
return {'all', next_status, total}

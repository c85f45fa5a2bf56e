-- Takes a joined fill back out of its running match, which the game server
-- refused or never acknowledged: the match's JSON loses the fill's tickets (the
-- caller built it from the match as read, fenced by its list of joined fills
-- 'fl'), its lifecycle no longer lists the fill, and the fill fails with no
-- server (so its players go back to the queue with their wait), due now.
-- KEYS: 1 the fill's lifecycle hash, 2 the running match's lifecycle hash,
--       3 matches hash, 4 due zset, 5 the running match's archived JSON
-- ARGV: 1 fill id, 2 running match id, 3 its 'fl' when the caller read it,
--       4 the match's JSON without the fill's tickets, 5 the reason
-- Returns {'done'}, {'moved'} (the fill is not a joined, unacknowledged,
-- assigned one), {'closed'} (the match is over: the fill ends with it) or
-- {'stale'} (read again and retry).
if redis.call('HGET', KEYS[1], 'st') ~= 'assigned'
  or not redis.call('HGET', KEYS[1], 'jat')
  or redis.call('HGET', KEYS[1], 'ak') then
  return {'moved'}
end
if redis.call('HGET', KEYS[2], 'st') ~= 'assigned' then return {'closed'} end
local fills = redis.call('HGET', KEYS[2], 'fl') or ''
if fills ~= ARGV[3] then return {'stale'} end
local kept = {}
for f in string.gmatch(fills, '[^,]+') do
  if f ~= ARGV[1] then kept[#kept + 1] = f end
end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
redis.call('SET', KEYS[5], ARGV[4], 'KEEPTTL')
if #kept > 0 then
  redis.call('HSET', KEYS[2], 'fl', table.concat(kept, ','))
else
  redis.call('HDEL', KEYS[2], 'fl')
end
redis.call('HSET', KEYS[1], 'st', 'failed', 'why', ARGV[5])
redis.call('HDEL', KEYS[1], 'srv')
redis.call('ZADD', KEYS[4], now_ms(), ARGV[1])
return {'done'}

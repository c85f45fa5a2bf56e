-- Joins a committed fill to the running match whose seats it took: the match's
-- JSON gains the fill's tickets (the caller built it from the match as read,
-- fenced by its list of joined fills 'fl', from which the JSON follows), its
-- lifecycle lists the fill, and the fill becomes assigned on the match's server
-- (joined now: 'jat') with its notification due now. Everything is in the pool's slot.
-- KEYS: 1 the fill's lifecycle hash, 2 the running match's lifecycle hash,
--       3 matches hash, 4 due zset, 5 the running match's archived JSON
-- ARGV: 1 fill id, 2 running match id, 3 its 'fl' when the caller read it,
--       4 the match's JSON with the fill's tickets
-- Returns {'joined', server JSON}, {'closed'} (the match is not assigned),
-- {'moved'} (the fill is not placing) or {'stale'} (read again and retry).
if redis.call('HGET', KEYS[1], 'st') ~= 'placing' then return {'moved'} end
if redis.call('HGET', KEYS[2], 'st') ~= 'assigned' then return {'closed'} end
local fills = redis.call('HGET', KEYS[2], 'fl') or ''
if fills ~= ARGV[3] then return {'stale'} end
local srv = redis.call('HGET', KEYS[2], 'srv') or '{}'
if fills ~= '' then fills = fills .. ',' .. ARGV[1] else fills = ARGV[1] end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
redis.call('SET', KEYS[5], ARGV[4], 'KEEPTTL')
redis.call('HSET', KEYS[2], 'fl', fills)
redis.call('HSET', KEYS[1], 'st', 'assigned', 'srv', srv, 'jat', now_ms())
redis.call('ZADD', KEYS[4], now_ms(), ARGV[1])
return {'joined', srv}

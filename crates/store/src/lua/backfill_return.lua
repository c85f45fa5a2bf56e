-- Gives the seats of a fill that ended without joining back to its running
-- match's backfill, once per fill (marked 'sb' in the fill's lifecycle hash),
-- and only if the backfill is still open, not lapsed and its match assigned.
-- KEYS: 1 the fill's lifecycle hash, 2 the pool's backfills hash, 3 the running
--       match's lifecycle hash
-- ARGV: 1 running match id, 2 players per team (comma-separated)
-- Returns 1 if the seats went back, 0 otherwise.
if redis.call('HSETNX', KEYS[1], 'sb', '1') == 0 then return 0 end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return 0 end
local b = cjson.decode(raw)
if b.closed or tonumber(b.expires_at) <= now_ms()
  or redis.call('HGET', KEYS[3], 'st') ~= 'assigned' then
  return 0
end
local team = 0
for n in string.gmatch(ARGV[2], '%d+') do
  team = team + 1
  if b.open[team] ~= nil then b.open[team] = tonumber(b.open[team]) + tonumber(n) end
end
b.generation = tonumber(b.generation) + 1
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(b))
return 1

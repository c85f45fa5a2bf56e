-- Gives allocation ARGV[1] a slot on a live server of one region and mode: the one
-- with the fewest free slots (servers fill before new ones are used). Servers whose
-- heartbeat lapsed are passed over and stop being offered until they heartbeat.
-- Idempotent: an id that holds a slot gets the same one back.
-- KEYS: 1 free-slot zset of the region and mode, 2 heartbeat zset, 3 allocations
--       hash, 4 address hash, 5 free-set names hash, 6 capacity hash
-- ARGV: 1 allocation id, 2 request JSON, 3 prefix of the servers' allocation sets
-- Returns {'dup', value}, {'new', value} or {'none'}; value is
-- 'server|address|ms|request JSON'.
local cur = redis.call('HGET', KEYS[3], ARGV[1])
if cur then return {'dup', cur} end
local now = now_ms()
local candidates = redis.call('ZRANGEBYSCORE', KEYS[1], 1, '+inf', 'LIMIT', 0, 32)
for _, s in ipairs(candidates) do
  local exp = redis.call('ZSCORE', KEYS[2], s)
  local names = redis.call('HGET', KEYS[5], s) or ''
  if exp and tonumber(exp) > now then
    local on = ARGV[3] .. s
    redis.call('SADD', on, ARGV[1])
    local free = tonumber(redis.call('HGET', KEYS[6], s)) - redis.call('SCARD', on)
    for z in string.gmatch(names, '[^,]+') do
      if free > 0 then redis.call('ZADD', z, free, s) else redis.call('ZREM', z, s) end
    end
    local value = s .. '|' .. (redis.call('HGET', KEYS[4], s) or '') .. '|' .. now .. '|' .. ARGV[2]
    redis.call('HSET', KEYS[3], ARGV[1], value)
    return {'new', value}
  end
  for z in string.gmatch(names, '[^,]+') do redis.call('ZREM', z, s) end
end
return {'none'}

-- Forgets tickets and matches that finished before ARGV[1] (ms), in chunks.
-- KEYS: 1 ticket data hash, 2 state hash, 3 matches hash, 4 done zset, 5 decisions hash,
--       6 since zset
-- ARGV: 1 cutoff ms, 2 chunk size, 3 prefix of the lifecycle hashes
-- Returns how many entries were forgotten.
local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #old == 0 then return 0 end
local tickets, matches = {}, {}
for _, id in ipairs(old) do
  if string.sub(id, 1, 2) == 'm-' then matches[#matches + 1] = id else tickets[#tickets + 1] = id end
end
if #tickets > 0 then
  redis.call('HDEL', KEYS[1], unpack(tickets))
  redis.call('HDEL', KEYS[2], unpack(tickets))
  redis.call('ZREM', KEYS[6], unpack(tickets))
end
if #matches > 0 then
  redis.call('HDEL', KEYS[3], unpack(matches))
  redis.call('HDEL', KEYS[5], unpack(matches))
  for _, mid in ipairs(matches) do redis.call('DEL', ARGV[3] .. mid) end
end
redis.call('ZREM', KEYS[4], unpack(old))
return #old

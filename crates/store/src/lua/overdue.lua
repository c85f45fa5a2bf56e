-- Lists a pool's live tickets queued in seconds before ARGV[1]'s (ms), oldest
-- seconds first, at most ARGV[2], from the waiting-since index (see since_add in
-- common.lua). Tickets that stopped waiting are passed over (depths.lua drops
-- them from the index).
-- KEYS: 1 since zset, 2 state hash, 3 ticket data hash
-- ARGV: 1 cutoff (ms), 2 most tickets
-- Returns the tickets' JSON.
local cutoff = tonumber(since_second(ARGV[1]))
local max = tonumber(ARGV[2])
local out = {}
for _, second in ipairs(redis.call('ZRANGE', KEYS[1], 0, 63)) do
  if tonumber(second) >= cutoff or #out >= max then break end
  local ids = redis.call('SMEMBERS', KEYS[1] .. ':' .. second)
  if #ids > 0 then
    local states = redis.call('HMGET', KEYS[2], unpack(ids))
    for i, s in ipairs(states) do
      if (s == 'q' or s == 's' or s == 'r') and #out < max then
        local json = redis.call('HGET', KEYS[3], ids[i])
        if json then out[#out + 1] = json end
      end
    end
  end
end
return out

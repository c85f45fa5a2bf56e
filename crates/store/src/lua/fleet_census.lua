-- Counts the fleet by region: live servers, and their free and used match slots. A
-- server whose heartbeat lapsed counts in none; one leaving counts as live with no
-- free slots.
-- KEYS: 1 servers hash, 2 heartbeat zset, 3 capacity hash, 4 leaving set
-- ARGV: 1 prefix of the servers' allocation sets
-- Returns a flat list: region, servers, free slots, used slots, ...
local now = now_ms()
local regions, order = {}, {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local id = all[i]
  local expires = tonumber(redis.call('ZSCORE', KEYS[2], id) or '0')
  if expires > now then
    local region = cjson.decode(all[i + 1]).region
    local r = regions[region]
    if not r then
      r = {0, 0, 0}
      regions[region] = r
      order[#order + 1] = region
    end
    local used = redis.call('SCARD', ARGV[1] .. id)
    local free = tonumber(redis.call('HGET', KEYS[3], id) or '0') - used
    if redis.call('SISMEMBER', KEYS[4], id) == 1 or free < 0 then free = 0 end
    r[1] = r[1] + 1
    r[2] = r[2] + free
    r[3] = r[3] + used
  end
end
local out = {}
for _, region in ipairs(order) do
  local r = regions[region]
  out[#out + 1] = region
  out[#out + 1] = r[1]
  out[#out + 1] = r[2]
  out[#out + 1] = r[3]
end
return out

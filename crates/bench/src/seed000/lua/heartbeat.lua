-- Seed 000's Heartbeat: stamps the worker's lease with Redis's clock and refreshes
-- the TTL of the lock of every ticket in its processing hash.
--
-- KEYS[1] mm:hb:WORKER   KEYS[2] mm:proc:WORKER
-- ARGV[1] lock TTL in seconds. Returns how many locks were refreshed.
local t = redis.call("TIME")
redis.call("SET", KEYS[1], t[1] * 1000 + math.floor(t[2] / 1000))
local refreshed = 0
for _, id in ipairs(redis.call("HKEYS", KEYS[2])) do
    refreshed = refreshed + redis.call("EXPIRE", "mm:lock:" .. id, ARGV[1])
end
return refreshed

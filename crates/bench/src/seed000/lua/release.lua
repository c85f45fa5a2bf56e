-- Seed 000's ReleaseTickets: tickets no match was found for go from the worker's
-- processing hash back to the queue, scored by their rating, and lose their lock.
--
-- KEYS[1] mm:queue:REGION   KEYS[2] mm:proc:WORKER
-- ARGV ticket ids. Returns how many went back.
local released = 0
for _, id in ipairs(ARGV) do
    local data = redis.call("HGET", KEYS[2], id)
    if data then
        redis.call("ZADD", KEYS[1], cjson.decode(data).mmr, id)
        redis.call("HDEL", KEYS[2], id)
        redis.call("DEL", "mm:lock:" .. id)
        released = released + 1
    end
end
return released

-- Seed 000's ReclaimStaleTickets: a full SCAN over the heartbeat keys; a worker
-- whose last beat is older than the lock TTL is stale, and every ticket in its
-- processing hash goes back to its region's queue (scored by rating) and loses
-- its lock. The stale worker's hash and heartbeat are deleted.
--
-- ARGV[1] lock TTL in milliseconds. Returns how many tickets were reclaimed.
local t = redis.call("TIME")
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local ttl = tonumber(ARGV[1])
local reclaimed = 0
local cursor = "0"
repeat
    local page = redis.call("SCAN", cursor, "MATCH", "mm:hb:*", "COUNT", 100)
    cursor = page[1]
    for _, hb in ipairs(page[2]) do
        local beat = tonumber(redis.call("GET", hb))
        if beat and now - beat > ttl then
            local proc = "mm:proc:" .. string.sub(hb, 7)
            local entries = redis.call("HGETALL", proc)
            for i = 1, #entries, 2 do
                local ticket = cjson.decode(entries[i + 1])
                redis.call("ZADD", "mm:queue:" .. ticket.region, ticket.mmr, entries[i])
                redis.call("DEL", "mm:lock:" .. entries[i])
                reclaimed = reclaimed + 1
            end
            redis.call("DEL", proc, hb)
        end
    end
until cursor == "0"
return reclaimed

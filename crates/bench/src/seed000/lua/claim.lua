-- Seed 000's ClaimTickets: the lowest-rated tickets of the range, each locked for
-- the worker with its own key (SET NX EX), taken off the queue and put in the
-- worker's processing hash. A ticket whose lock another worker holds is skipped.
--
-- KEYS[1] mm:queue:REGION   KEYS[2] mm:proc:WORKER
-- ARGV[1] worker id  ARGV[2] lowest rating  ARGV[3] highest rating
-- ARGV[4] most tickets  ARGV[5] lock TTL in seconds
-- Returns the claimed tickets' JSON.
local candidates = redis.call("ZRANGEBYSCORE", KEYS[1], ARGV[2], ARGV[3], "LIMIT", 0, ARGV[4])
local claimed = {}
for _, id in ipairs(candidates) do
    if redis.call("SET", "mm:lock:" .. id, ARGV[1], "NX", "EX", ARGV[5]) then
        local data = redis.call("HGET", "mm:tkt:" .. id, "data")
        redis.call("ZREM", KEYS[1], id)
        if data then
            redis.call("HSET", KEYS[2], id, data)
            claimed[#claimed + 1] = data
        else
            redis.call("DEL", "mm:lock:" .. id)
        end
    end
end
return claimed

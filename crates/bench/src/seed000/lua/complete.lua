-- Seed 000's CompleteTickets: matched tickets leave the worker's processing hash
-- and their locks are deleted, in the cycle that matched them.
--
-- KEYS[1] mm:proc:WORKER
-- ARGV ticket ids. Returns how many were completed.
local done = 0
for _, id in ipairs(ARGV) do
    done = done + redis.call("HDEL", KEYS[1], id)
    redis.call("DEL", "mm:lock:" .. id)
end
return done

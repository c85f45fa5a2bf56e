-- Reads a pool's queue depth and the number of tickets all workers hold, in one
-- atomic step (two separate reads can miss tickets moving between them).
-- KEYS: 1 queue zset, 2 leases zset
-- ARGV: 1 prefix of the workers' held-set keys (same hash tag as the pool)
-- Returns {queued, held}.
local held = 0
for _, worker in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  held = held + redis.call('ZCARD', ARGV[1] .. worker)
end
return {redis.call('ZCARD', KEYS[1]), held}

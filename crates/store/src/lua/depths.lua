-- Reads a pool's queue depth, the number of tickets all workers hold and the
-- enqueue time of the longest-waiting ticket, in one atomic step (separate reads
-- can miss tickets moving between them).
-- The since zset orders tickets by enqueue time; entries of tickets that stopped
-- waiting (matched, cancelled, withdrawn) are dropped here when they reach its head,
-- a bounded number per call (a requeued ticket is added again).
-- KEYS: 1 queue zset, 2 leases zset, 3 since zset, 4 state hash
-- ARGV: 1 prefix of the workers' held-set keys (same hash tag as the pool)
-- Returns {queued, held, oldest enqueue time in ms or -1}.
local held = 0
for _, worker in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  held = held + redis.call('ZCARD', ARGV[1] .. worker)
end
local oldest = -1
for _ = 1, 1000 do
  local head = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  if #head == 0 then break end
  local s = redis.call('HGET', KEYS[4], head[1])
  if s == 'q' or s == 's' or s == 'r' then
    oldest = tonumber(head[2])
    break
  end
  redis.call('ZREM', KEYS[3], head[1])
end
return {redis.call('ZCARD', KEYS[1]), held, oldest}

-- A new pool leader takes over: every ticket held in the pool (a dead or deposed
-- leader's, or its own from an earlier term: a leader whose lock lapsed and that
-- took it again) goes back to the queue, to be claimed by the new leader with the
-- rest. Fenced: only the latest leader may. Wakes the pool.
-- KEYS: 1 queue zset, 2 state hash, 3 the pool's fencing counter, 4 armed flag,
--       then the held zsets: the new leader's, then the other workers'
-- ARGV: 1 the leader's fencing token, 2 wake channel, 3 pool name
-- Returns how many tickets went back to the queue.
fenced(KEYS[3], ARGV[1])
local n = 0
for k = 5, #KEYS do
  n = n + requeue(KEYS[1], KEYS[2], KEYS[k], redis.call('ZRANGE', KEYS[k], 0, -1))
end
if n > 0 then wake(KEYS[4], ARGV[2], ARGV[3]) end
return n

-- A new pool leader takes over: every ticket held in the pool (a claim worker's
-- from before the pool was led, or one a leader held before leaders read the
-- queue instead of taking from it) goes back to the queue; then the whole queue
-- is pushed to the arrivals list, emptied first, for the leader to read in
-- steps (lead_read.lua). From here on every script that queues a ticket pushes
-- it there too (see arrived), as long as the lock exists. What an earlier
-- leader read is still in the queue (a leader takes a ticket out only when it
-- commits its match), so nothing of a dead leader's needs handing back.
-- Fenced: only the latest leader may. Wakes the pool.
-- KEYS: 1 queue zset, 2 state hash, 3 the pool's fencing counter, 4 armed flag,
--       5 the pool leader's lock, 6 the pool's arrivals list, then the held
--       zsets: the new leader's, then the other workers'
-- ARGV: 1 the leader's fencing token, 2 wake channel, 3 pool name
-- Returns how many tickets went back to the queue.
fenced(KEYS[3], ARGV[1])
local n = 0
for k = 7, #KEYS do
  n = n + requeue(KEYS[1], KEYS[2], KEYS[k], redis.call('ZRANGE', KEYS[k], 0, -1), KEYS[5], KEYS[6])
end
if reread(KEYS[1], KEYS[6]) > 0 then wake(KEYS[4], ARGV[2], ARGV[3]) end
return n

-- A pool leader's count of its pool, the safety net under arrived(): if the
-- queue holds more tickets than the leader has (ARGV[2], after its last prune)
-- and its arrivals list holds, something was queued without being pushed to
-- the list (a process of an older release queueing beside this one in a
-- rolling upgrade), and the whole queue is pushed again, the list emptied
-- first, as adopt.lua does. The leader drops what it has already.
-- KEYS: 1 queue zset, 2 the pool's arrivals list, 3 the pool's fencing counter
-- ARGV: 1 the leader's fencing token, 2 how many tickets the leader has
-- Returns how many tickets the queue held beyond the count (0: none missed).
fenced(KEYS[3], ARGV[1])
local total = redis.call('ZCARD', KEYS[1])
local missed = total - tonumber(ARGV[2]) - redis.call('LLEN', KEYS[2])
if missed <= 0 then return 0 end
reread(KEYS[1], KEYS[2])
return missed

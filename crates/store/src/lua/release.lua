-- Returns tickets a worker holds to the queue with their rating and original
-- enqueue time (the ticket data is untouched). With no ids, releases all it holds.
-- A pool leader's tickets are in the queue already (see lead_read.lua): its
-- release only empties the arrivals list.
-- KEYS: 1 queue zset, 2 state hash, 3 worker's held zset, 4 the pool's fencing counter,
--       5 the pool leader's lock, 6 the pool's arrivals list (see arrived)
-- ARGV: 1 the leader's fencing token ('' for a worker that is not a pool leader),
--       then ticket ids (optional)
-- Returns how many tickets went back to the queue.
fenced(KEYS[4], ARGV[1])
local ids = {}
for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then
  ids = redis.call('ZRANGE', KEYS[3], 0, -1)
  -- A leader handing its pool over: what it had not read yet is still in the
  -- queue, and the next leader pushes the whole queue again (adopt.lua).
  if ARGV[1] ~= '' then redis.call('DEL', KEYS[6]) end
end
return requeue(KEYS[1], KEYS[2], KEYS[3], ids, KEYS[5], KEYS[6])

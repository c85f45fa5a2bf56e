-- Returns tickets a worker holds to the queue with their rating and original
-- enqueue time (the ticket data is untouched). With no ids, releases all it holds.
-- KEYS: 1 queue zset, 2 state hash, 3 worker's held zset
-- ARGV: ticket ids (optional)
-- Returns how many tickets went back to the queue.
local ids = ARGV
if #ids == 0 then ids = redis.call('ZRANGE', KEYS[3], 0, -1) end
return requeue(KEYS[1], KEYS[2], KEYS[3], ids)

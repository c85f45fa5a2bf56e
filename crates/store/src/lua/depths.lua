-- Reads a pool's queue depth, the number of tickets all workers hold and the
-- enqueue time of the longest-waiting ticket, in one atomic step (separate reads
-- can miss tickets moving between them).
-- The oldest wait comes from the waiting-since index (see since_add in
-- common.lua): the earliest second with a ticket still waiting, given as the
-- earliest enqueue time seen in it, so up to a second early when the ticket that
-- set it has left. Tickets that stopped waiting (cancelled, withdrawn; matched
-- ones leave at commit) are dropped here when their second is the oldest, and
-- seconds left empty with them, a bounded number per call.
-- KEYS: 1 queue zset, 2 leases zset, 3 since zset, 4 state hash
-- ARGV: 1 prefix of the workers' held-set keys (same hash tag as the pool)
-- Returns {queued, held, oldest enqueue time in ms or -1}.
local held = 0
for _, worker in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  held = held + redis.call('ZCARD', ARGV[1] .. worker)
end
local oldest = -1
local budget = 1000
while budget > 0 do
  local head = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  if #head == 0 then break end
  local set = KEYS[3] .. ':' .. head[1]
  local sample = redis.call('SRANDMEMBER', set, 100)
  if #sample == 0 then
    -- Emptied (or an entry of a ticket from before the index had seconds).
    redis.call('ZREM', KEYS[3], head[1])
    budget = budget - 1
  else
    local states = redis.call('HMGET', KEYS[4], unpack(sample))
    local dead = {}
    for i, s in ipairs(states) do
      if s == 'q' or s == 's' or s == 'r' then
        oldest = tonumber(head[2])
        break
      end
      dead[#dead + 1] = sample[i]
    end
    if oldest >= 0 then break end
    redis.call('SREM', set, unpack(dead))
    budget = budget - #sample
  end
end
if oldest < 0 and budget <= 0 then
  -- Out of budget with seconds left to look at: the oldest of them may wait.
  local head = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  if #head > 0 then oldest = tonumber(head[2]) end
end
return {redis.call('ZCARD', KEYS[1]), held, oldest}

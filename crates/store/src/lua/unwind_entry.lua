-- Hands a ticket's entry in one pool back after its match ended before it was
-- played: 'requeue' puts it back in the queue (keeping its queue score and, in the
-- ticket data, its original enqueue time) if it is still in this match or was set
-- aside because of it; 'end' gives the matched entry its final state. Idempotent.
-- A requeued entry wakes the pool's workers (see enqueue.lua).
-- KEYS: 1 queue zset, 2 state hash, 3 done zset, 4 since zset, 5 armed flag,
--       6 the pool leader's lock, 7 the pool's arrivals list (see arrived),
--       8 ticket data hash
-- ARGV: 1 ticket id, 2 match id, 3 'requeue' or 'end', 4 rating, 5 final state,
--       6 the ticket's enqueue time (ms), 7 wake channel, 8 pool name, 9 the
--       lanes' span (LANE_SPAN), 10 the lanes' count (LANES), 11 and 12 the
--       lowest and highest rating
-- Returns 1 if the entry changed.

-- The ticket's queue score, as `Ticket::queue_score` has it: the rating, in its
-- lane (in the ticket's data; lane 0 when it has none).
local function score()
  local raw = redis.call('HGET', KEYS[8], ARGV[1])
  local lane = raw and tonumber(string.match(raw, '"lane":(%d+)')) or 0
  if lane == 0 then return ARGV[4] end
  local rating = math.min(math.max(tonumber(ARGV[4]), tonumber(ARGV[11])), tonumber(ARGV[12]))
  return string.format('%.17g', (lane % tonumber(ARGV[10])) * tonumber(ARGV[9]) + rating)
end

local s = redis.call('HGET', KEYS[2], ARGV[1])
local matched = s == 'm:' .. ARGV[2]
if ARGV[3] == 'requeue' then
  if not (matched or s == 'w:matched') then return 0 end
  redis.call('HSET', KEYS[2], ARGV[1], 'r')
  redis.call('ZADD', KEYS[1], score(), ARGV[1])
  since_add(KEYS[4], ARGV[6], ARGV[1])
  arrived(KEYS[6], KEYS[7], {ARGV[1]})
  redis.call('ZREM', KEYS[3], ARGV[1])
  wake(KEYS[5], ARGV[7], ARGV[8])
  return 1
end
if not matched then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[5])
redis.call('ZADD', KEYS[3], now_ms(), ARGV[1])
return 1

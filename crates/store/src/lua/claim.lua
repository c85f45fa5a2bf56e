-- Claims up to ARGV[2] (at most 2000) queued tickets for a worker, atomically.
-- The batch is a contiguous run of the rating-ordered queue starting at a rank the
-- caller picks at random (ARGV[3] in [0,1)), so batches are rating-tight and no
-- rating band is systematically left behind. A queue whose mode keeps builds
-- apart is ordered by lane first (`Ticket::queue_score`): the run keeps to the
-- lane of the ticket at the start rank, and is moved back from the lane's end
-- as it is from the queue's, so each build's rating extremes are claimed with
-- a full run of their own build, as the queue's are.
-- Arms the pool: the next ticket queued publishes a wake-up (see enqueue.lua).
-- A claim worker claims nothing while a leader holds the pool's lock (an error
-- LED): the pool is the leader's alone (a leader does not claim: it reads its
-- pool, see lead_read.lua).
-- KEYS: 1 queue zset, 2 ticket data hash, 3 state hash, 4 worker's held zset, 5 leases zset,
--       6 armed flag, 7 the pool leader's lock
-- ARGV: 1 worker id, 2 max tickets, 3 start fraction, 4 lease ms, 5 ('' none)
--       a floor: then at most half the queue is taken, or the floor if that is
--       more, 6 the lanes' span (LANE_SPAN)
-- Returns a flat list: ticket JSON, first-claim flag (1/0), ...
if redis.call('EXISTS', KEYS[7]) == 1 then
  error({err = 'LED the pool has a leader (COORDINATION=leader); a claim worker leaves it alone'})
end
local now = now_ms()
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[4]), ARGV[1])
redis.call('SET', KEYS[6], '1')
local n = redis.call('ZCARD', KEYS[1])
-- At most 2000: the held set's ZADD and the states' HSET take two values a
-- ticket through `unpack`, which stops near 8000 (Lua's stack), and a call that
-- failed there would have taken its tickets off the queue already.
local max = math.min(tonumber(ARGV[2]), 2000)
if ARGV[5] and ARGV[5] ~= '' then
  max = math.min(max, math.max(tonumber(ARGV[5]), math.ceil(n / 2)))
end
if n == 0 or max <= 0 then return {} end
local start = math.min(math.floor(tonumber(ARGV[3]) * n), n - 1)
-- The ranks [lo, hi) of the start ticket's lane (the whole queue in lane 0).
local lo, hi = 0, n
local at = redis.call('ZRANGE', KEYS[1], start, start, 'WITHSCORES')
local span = tonumber(ARGV[6])
local lane = at[2] and math.floor(tonumber(at[2]) / span) or 0
if lane > 0 then
  local from, to = string.format('%.17g', lane * span), string.format('%.17g', (lane + 1) * span)
  lo = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. from)
  hi = lo + redis.call('ZCOUNT', KEYS[1], from, '(' .. to)
end
if start + max > hi then start = hi - max end
if start < lo then start = lo end
local last = math.min(start + max, hi) - 1
local got = redis.call('ZRANGE', KEYS[1], start, last, 'WITHSCORES')
redis.call('ZREMRANGEBYRANK', KEYS[1], start, last)
local ids, held = {}, {}
for i = 1, #got, 2 do
  ids[#ids + 1] = got[i]
  held[#held + 1] = got[i + 1]
  held[#held + 1] = got[i]
end
local prev = redis.call('HMGET', KEYS[3], unpack(ids))
local data = redis.call('HMGET', KEYS[2], unpack(ids))
local out, states, orphans = {}, {}, {}
for i, id in ipairs(ids) do
  if data[i] then
    states[#states + 1] = id
    states[#states + 1] = 's'
    out[#out + 1] = data[i]
    out[#out + 1] = (prev[i] == 'q') and 1 or 0
  else
    orphans[#orphans + 1] = id
  end
end
redis.call('ZADD', KEYS[4], unpack(held))
if #orphans > 0 then
  -- A queue entry without ticket data cannot be matched: drop it.
  redis.call('ZREM', KEYS[4], unpack(orphans))
  redis.call('HDEL', KEYS[3], unpack(orphans))
end
if #states > 0 then redis.call('HSET', KEYS[3], unpack(states)) end
return out

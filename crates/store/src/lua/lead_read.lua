-- A pool leader's read of what was queued since its last read: up to ARGV[3]
-- tickets still searching, taken from the head of the arrivals list (see
-- adopt.lua and arrived). The tickets stay in the queue, marked held ('s'); the
-- leader takes them out of it when it commits their match (complete.lua with
-- the queue as the held set). Ids of tickets that ended meanwhile (cancelled,
-- withdrawn, matched elsewhere) are dropped from the list and not returned.
-- Sets the leader's lease and arms the pool, as claim.lua does. Refused
-- (FENCED) unless the caller's token is the latest and the lock is held: only
-- then does the list hold what the leader has not read.
-- KEYS: 1 arrivals list, 2 ticket data hash, 3 state hash, 4 leases zset,
--       5 armed flag, 6 the pool's fencing counter, 7 the pool leader's lock
-- ARGV: 1 worker id, 2 the leader's fencing token, 3 max tickets (at most
--       2000), 4 lease ms
-- Returns a flat list: ticket JSON, first-read flag (1/0: it was new), ...
fenced(KEYS[6], ARGV[2])
if redis.call('EXISTS', KEYS[7]) == 0 then
  error({err = 'FENCED the pool leader lock lapsed: token ' .. ARGV[2] .. ' no longer holds it'})
end
redis.call('ZADD', KEYS[4], now_ms() + tonumber(ARGV[4]), ARGV[1])
redis.call('SET', KEYS[5], '1')
local max = math.min(tonumber(ARGV[3]), 2000)
local out, states, found = {}, {}, 0
while found < max do
  local ids = redis.call('LPOP', KEYS[1], max - found)
  if not ids then break end
  local prev = redis.call('HMGET', KEYS[3], unpack(ids))
  local data = redis.call('HMGET', KEYS[2], unpack(ids))
  for i, id in ipairs(ids) do
    local s = prev[i]
    if data[i] and (s == 'q' or s == 'r' or s == 's') then
      if s ~= 's' then
        states[#states + 1] = id
        states[#states + 1] = 's'
      end
      out[#out + 1] = data[i]
      out[#out + 1] = (s == 'q') and 1 or 0
      found = found + 1
    end
  end
end
if #states > 0 then redis.call('HSET', KEYS[3], unpack(states)) end
return out

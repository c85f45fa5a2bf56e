-- Commits matches formed by a worker. A match commits only if the worker still
-- holds every one of its tickets and none was cancelled meanwhile; otherwise it is
-- skipped whole and its tickets stay held (the worker releases them next).
-- KEYS: 1 state hash, 2 worker's held zset, 3 matches hash, 4 done zset, 5 outbox zset
-- ARGV: repeated groups: match id, match JSON, ticket count n, n ticket ids
-- Returns the ids of the committed matches.
local now = now_ms()
local committed = {}
local i = 1
while i <= #ARGV do
  local mid, json, n = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local ok = true
  for j = 1, n do
    local id = ARGV[i + 2 + j]
    if not redis.call('ZSCORE', KEYS[2], id) or redis.call('HGET', KEYS[1], id) ~= 's' then
      ok = false
      break
    end
  end
  if ok then
    local ids, states, done = {}, {}, {}
    for j = 1, n do
      local id = ARGV[i + 2 + j]
      ids[#ids + 1] = id
      states[#states + 1] = id
      states[#states + 1] = 'm:' .. mid
      done[#done + 1] = now
      done[#done + 1] = id
    end
    done[#done + 1] = now
    done[#done + 1] = mid
    redis.call('ZREM', KEYS[2], unpack(ids))
    redis.call('HSET', KEYS[1], unpack(states))
    redis.call('ZADD', KEYS[4], unpack(done))
    redis.call('HSET', KEYS[3], mid, json)
    redis.call('ZADD', KEYS[5], now, mid)
    committed[#committed + 1] = mid
  end
  i = i + 3 + n
end
return committed

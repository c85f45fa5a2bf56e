-- Commits matches formed by a worker, after their players were reserved. A match
-- commits only if it was not aborted meanwhile (see decide.lua), the worker still
-- holds every one of its tickets and none was cancelled or withdrawn; otherwise it
-- is aborted whole and its tickets stay held (the worker releases them next). The
-- decision is recorded once: 'c' committed or 'a' aborted. A committed match gets
-- its lifecycle hash (status, players, ready-check deadline), its archived JSON
-- (what the players' histories point to; it expires with them) and, when its saga
-- has a step to take, an entry in the due set.
-- The committed tickets leave the waiting-since zset here, at once (depths.lua
-- would drop them one by one when they reach its head).
-- KEYS: 1 state hash, 2 worker's held zset, 3 matches hash, 4 done zset, 5 outbox zset,
--       6 decisions hash, 7 due zset, 8 recent matches list, 9 the pool's fencing
--       counter, 10 waiting-since zset
-- ARGV: 1 prefix of the lifecycle hashes, 2 how many recent matches to keep, 3 the
--       leader's fencing token ('' for a worker that is not a pool leader), 4 prefix
--       of the archived match JSON, 5 its time to live (s), then
--       repeated groups: match id, match JSON,
--       'c' to try or 'a' to abort, status, ready-check deadline ('' none), player
--       count, due time ('' none), status after acceptance, disconnect grace ms,
--       ticket count n, n ticket ids
-- Returns the ids of the committed matches.
fenced(KEYS[9], ARGV[3])
-- As a string once: Lua formats a number each time it is passed to Redis.
local now = string.format('%d', now_ms())
local committed = {}
local i = 6
while i <= #ARGV do
  local mid, json, try = ARGV[i], ARGV[i + 1], ARGV[i + 2] == 'c'
  local status, deadline, players, due = ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6]
  local next_status, grace = ARGV[i + 7], ARGV[i + 8]
  local n = tonumber(ARGV[i + 9])
  i = i + 6
  local ok = try and not redis.call('HGET', KEYS[6], mid)
  if ok then
    local ids = {}
    for j = 1, n do ids[j] = ARGV[i + 3 + j] end
    local states = redis.call('HMGET', KEYS[1], unpack(ids))
    for j = 1, n do
      if states[j] ~= 's' or not redis.call('ZSCORE', KEYS[2], ids[j]) then
        ok = false
        break
      end
    end
  end
  if ok then
    local ids, states, done = {}, {}, {}
    for j = 1, n do
      local id = ARGV[i + 3 + j]
      ids[#ids + 1] = id
      states[#states + 1] = id
      states[#states + 1] = 'm:' .. mid
      done[#done + 1] = now
      done[#done + 1] = id
    end
    local life = ARGV[1] .. mid
    redis.call('HSET', life, 'st', status, 'n', players, 'nx', next_status, 'gr', grace)
    if deadline ~= '' then redis.call('HSET', life, 'dl', deadline) end
    if due ~= '' then redis.call('ZADD', KEYS[7], due, mid) end
    if status == 'completed' then
      -- Nothing more happens to it: it may be forgotten after the retention.
      redis.call('HSET', life, 'set', '1')
      done[#done + 1] = now
      done[#done + 1] = mid
    end
    redis.call('ZREM', KEYS[2], unpack(ids))
    redis.call('ZREM', KEYS[10], unpack(ids))
    redis.call('HSET', KEYS[1], unpack(states))
    redis.call('ZADD', KEYS[4], unpack(done))
    redis.call('HSET', KEYS[3], mid, json)
    redis.call('SET', ARGV[4] .. mid, json, 'EX', ARGV[5])
    redis.call('HSET', KEYS[6], mid, 'c')
    redis.call('ZADD', KEYS[5], now, mid)
    redis.call('LPUSH', KEYS[8], mid)
    committed[#committed + 1] = mid
  elseif redis.call('HSETNX', KEYS[6], mid, 'a') == 1 then
    redis.call('ZADD', KEYS[4], now, mid)
  end
  i = i + 4 + n
end
if #committed > 0 then redis.call('LTRIM', KEYS[8], 0, tonumber(ARGV[2]) - 1) end
return committed

-- Shared helpers, prepended to the scripts that use them at compile time.

-- Redis server time in milliseconds: every process shares this clock.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- While a pool has a leader (its lock `lock` exists), every ticket put in its
-- queue is also pushed to `arrivals`, the list the leader reads what is new
-- from (see lead_read.lua): a leader reads the queue, it does not take from it.
local function arrived(lock, arrivals, ids)
  if #ids == 0 or redis.call('EXISTS', lock) == 0 then return end
  for i = 1, #ids, 2000 do
    redis.call('RPUSH', arrivals, unpack(ids, i, math.min(i + 1999, #ids)))
  end
end

-- Has a pool's leader read its whole queue `q` again: empties `arrivals` and
-- pushes every queued ticket to it, in the queue's order (lane, then rating).
-- Returns how many.
local function reread(q, arrivals)
  redis.call('DEL', arrivals)
  local total = redis.call('ZCARD', q)
  for from = 0, total - 1, 2000 do
    local ids = redis.call('ZRANGE', q, from, from + 1999)
    if #ids > 0 then redis.call('RPUSH', arrivals, unpack(ids)) end
  end
  return total
end

-- Returns the given tickets held in worker set `held` to queue `q`, keeping their
-- rating score (and pushes them to the pool's `arrivals` while it has a leader,
-- its lock `lock`). Tickets cancelled while held are dropped (they are already
-- final); tickets not held by this worker are left alone. Returns how many were
-- requeued.
local function requeue(q, st, held, ids, lock, arrivals)
  local back, states, gone, ids_back = {}, {}, {}, {}
  -- In steps: unpack has a limit, and a pool leader may hold a whole pool. Each
  -- step reads its scores and states in one call each, not two calls a ticket
  -- (a claim worker under rules releases most of what it claims).
  local step = 2000
  for i = 1, #ids, step do
    local last = math.min(i + step - 1, #ids)
    local scores = redis.call('ZMSCORE', held, unpack(ids, i, last))
    local current = redis.call('HMGET', st, unpack(ids, i, last))
    for k = 1, last - i + 1 do
      local id = ids[i + k - 1]
      if scores[k] then
        gone[#gone + 1] = id
        if current[k] == 's' then
          back[#back + 1] = scores[k]
          back[#back + 1] = id
          states[#states + 1] = id
          states[#states + 1] = 'r'
          ids_back[#ids_back + 1] = id
        end
      end
    end
  end
  for i = 1, #gone, step do
    redis.call('ZREM', held, unpack(gone, i, math.min(i + step - 1, #gone)))
  end
  for i = 1, #back, step do
    redis.call('ZADD', q, unpack(back, i, math.min(i + step - 1, #back)))
    redis.call('HSET', st, unpack(states, i, math.min(i + step - 1, #states)))
  end
  arrived(lock, arrivals, ids_back)
  return #back / 2
end

-- A player's ticket index (hash `mm:{u:PLAYER}:tix`) names each of their
-- tickets (field: ticket id; value: its pools, comma-separated, home pool first,
-- then ',@MS', when the ticket was activated) and their history (see
-- record_history). A ticket's pools are read by splitting at commas and keeping
-- names of pools (the '@' item is none; an older ingress wrote no time).
local function index_entry(pools, ms)
  return pools .. ',@' .. ms
end

-- The newest `keep` of `entries` ({time, field} pairs) stay; the field of each
-- other is appended to `gone`.
local function oldest_beyond(entries, keep, gone)
  if #entries <= keep then return end
  table.sort(entries, function(a, b) return a[1] > b[1] end)
  for i = keep + 1, #entries do gone[#gone + 1] = entries[i][2] end
end

-- Bounds a player's ticket index (and so what reading it costs): the tickets
-- live now (named by the player's active hash `active`) all stay, of the
-- others the newest `len` / 2 (by activation time; a field an older version
-- wrote has none and counts as the oldest), of the matches the newest `len`.
-- A finished ticket's field is what lets its player read it by id until the
-- supervisor purges it (an hour by default); a player with more finished
-- tickets than that in the retention is a flooder. Without a bound an active
-- player's index kept every ticket they ever queued (its expiry moves with
-- each new ticket). Callers call it one write in eight or so (when the last
-- byte of the written id is a multiple of 8, checked where they write: a call
-- per matched player costs more than the check), and it trims only an index
-- of more than twice `len` fields: after a trim it holds at most 1.5 `len`
-- and the live.
local function trim_index(index, active, len)
  if redis.call('HLEN', index) <= 2 * len then return end
  local live = {}
  for _, v in ipairs(redis.call('HVALS', active)) do live[string.match(v, '^[^|]*')] = true end
  local all = redis.call('HGETALL', index)
  local played, finished = {}, {}
  for i = 1, #all, 2 do
    local field, value = all[i], all[i + 1]
    if string.sub(field, 1, 2) == 'm:' then
      played[#played + 1] = {tonumber(string.match(value, '^%d+')) or 0, field}
    elseif not live[field] then
      finished[#finished + 1] = {tonumber(string.match(value, ',@(%d+)$')) or 0, field}
    end
  end
  local gone = {}
  oldest_beyond(played, len, gone)
  oldest_beyond(finished, math.floor(len / 2), gone)
  for i = 1, #gone, 1000 do
    redis.call('HDEL', index, unpack(gone, i, math.min(i + 999, #gone)))
  end
end

-- Records match `mid` of `pool`, created at `created` (ms, a string), in a
-- player's history: a field of their ticket index, 'm:MATCH' -> 'CREATED|pool'
-- (ids hold no ':', so no ticket's field is one). The index was written, with
-- the player's lifetime, when the matched ticket was activated, so recording
-- the match is one write to a hash that exists, where a key of its own took
-- creating and an expiry of its own (about 1.5 us of Redis per matched player).
-- Readers take the newest `len`; trim_index drops the older ones now and then.
-- `active` is the player's active hash (for the trim).
local function record_history(index, active, mid, created, pool, len)
  redis.call('HSET', index, 'm:' .. mid, created .. '|' .. pool)
  if string.byte(mid, -1) % 8 == 0 then trim_index(index, active, len) end
end

-- The waiting-since index of a pool, for its oldest wait (see depths.lua): the zset
-- `since` has a member per second of enqueue time in which tickets wait (the
-- second, scored by the earliest enqueue time in ms it saw), and the set
-- `since:SECOND` the tickets enqueued in that second. A ticket leaves its set when
-- matched; one cancelled or withdrawn is dropped when its second is the oldest
-- (or when purged). A set's member costs a fraction of a zset's to remove.
-- `ms` is a decimal string of milliseconds as the store passes them (or a
-- number, decoded from a ticket's JSON): for a string its digits but the last
-- three (a cut costs a quarter of formatting the division: about 0.1 us
-- against 0.35 us a call, for every ticket queued and matched).
local function since_second(ms)
  if type(ms) == 'string' and #ms > 3 then return string.sub(ms, 1, -4) end
  return string.format('%d', math.floor(tonumber(ms) / 1000))
end

local function since_add(since, ms, id)
  local second = since_second(ms)
  redis.call('ZADD', since, 'LT', ms, second)
  redis.call('SADD', since .. ':' .. second, id)
end

-- Removes tickets `ids` from the index; `mss` are their enqueue times.
local function since_remove(since, ids, mss)
  local by, seconds = {}, {}
  for i, id in ipairs(ids) do
    local second = since_second(mss[i])
    if not by[second] then
      by[second] = {}
      seconds[#seconds + 1] = second
    end
    by[second][#by[second] + 1] = id
  end
  for _, second in ipairs(seconds) do
    local set = since .. ':' .. second
    redis.call('SREM', set, unpack(by[second]))
    if redis.call('SCARD', set) == 0 then redis.call('ZREM', since, second) end
  end
end

-- Redis server time in microseconds (the rate limiters' clock).
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- GCRA: up to `want` calls at once against a limiter whose theoretical arrival
-- time is `tat` (µs; nil or past: idle) at `now`, allowing `burst` calls at once
-- and one per `interval` µs. Grants as many of them as fit (charging those).
-- Returns the limiter's TAT afterwards, the calls granted, and, when fewer than
-- `want` were, the µs until one more would be allowed (else 0).
local function gcra(tat, now, interval, burst, want)
  if tat == nil or tat < now then tat = now end
  local got = math.max(0, math.min(want, math.floor((now + interval * burst - tat) / interval)))
  tat = tat + got * interval
  if got == want then return tat, got, 0 end
  return tat, got, math.max(1, math.ceil(tat + interval - interval * burst - now))
end

-- Stores a limiter's TAT; the key expires when the limiter is idle again.
local function gcra_store(key, tat, now)
  redis.call('SET', key, string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
end

-- Wakes the workers of a pool once per claim: if the pool is armed (a claim ran
-- since the last wake-up), disarms it and publishes the pool's name.
local function wake(armed, channel, pool)
  if redis.call('DEL', armed) == 1 then
    redis.call('PUBLISH', channel, pool)
  end
end

-- Refuses a pool leader's write carrying a stale fencing token: `fence` ('' for a
-- write that is not a leader's: no check) is older than the pool's fencing counter
-- at `key`, so a later leader took the pool (see locks.rs). Raises a FENCED error,
-- so the script writes nothing.
local function fenced(key, fence)
  if fence == nil or fence == '' then return end
  local current = tonumber(redis.call('GET', key) or '0')
  if tonumber(fence) < current then
    error({err = 'FENCED fencing token ' .. fence .. ' is stale: the pool has a later leader (' .. current .. ')'})
  end
end

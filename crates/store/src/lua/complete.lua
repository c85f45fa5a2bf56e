-- Commits matches formed by a worker, after their players were reserved. A match
-- commits only if it was not aborted meanwhile (see decide.lua), the worker still
-- holds every one of its tickets and none was cancelled or withdrawn; otherwise it
-- is aborted whole and its tickets stay held (the worker releases them next).
-- A pool leader's call (a fencing token in ARGV[3]) is refused whole unless the
-- leader lock (KEYS[12]) is held and its fencing counter is the caller's token:
-- then the caller has held the lock without a break since it took it, every
-- claim but its own was refused meanwhile (claim.lua), so a ticket of its
-- whose state says held ('s') is held by it, and its held set is not read (a
-- leader passes the queue as KEYS[2]: its tickets stay there until their match
-- commits, and leave it here; see lead_read.lua). The
-- decision is recorded once: 'c' committed or 'a' aborted. A committed match gets
-- its lifecycle hash (status, players, ready-check deadline, its tickets and when
-- they joined it; the tickets enter the done zset with the match, as one entry,
-- when it ends: see purge.lua), its archived JSON
-- (what the players' histories point to; it expires with them) and, when its saga
-- has a step to take, an entry in the due set.
-- The committed tickets leave the waiting-since index here, at once (see
-- since_add; depths.lua would drop them only when their second is the oldest).
--
-- A fill (a match joining a running match's open seats: backfill) commits only if
-- that match's backfill (KEYS[11]) is open, not lapsed, still at the generation
-- the worker read, its match assigned, and it has the fill's seats on each team;
-- the commit takes the seats and raises the generation, so a second fill of the
-- same read aborts.
--
-- Single node only, 'f' (fast): a match whose players were not reserved, passed
-- with their keys. It commits as 'c' would only if every player is simple: no
-- reservation (no cross-pool commit has them) and one live entry, this match's
-- ticket in this pool alone. Then no other match can take them (their one ticket
-- is held here) and this script also settles them as settle.lua would: the
-- history, the live entry, the in-match mark. A match with a player who is not
-- simple is left untouched and returned for the cross-slot protocol.
-- The history goes into the player's ticket index (see record_history), which
-- exists with its lifetime: the live entry just read names this ticket, and the
-- script that wrote it (create.lua, activate.lua) wrote the ticket's index field
-- and both keys' expiry in the same call; nothing removes a live ticket's field.
-- KEYS: 1 state hash, 2 worker's held zset (a leader's: the queue), 3 matches hash, 4 done zset, 5 outbox zset,
--       6 decisions hash, 7 due zset, 8 recent matches list, 9 the pool's fencing
--       counter, 10 waiting-since zset (see since_add), 11 the pool's backfills hash,
--       12 the pool leader's lock, then ('f' matches) four keys per player:
--       active hash, ticket index hash (the history), reservation string,
--       in-match string (as settle.lua takes them, but for the old history zset,
--       which this never reads)
-- ARGV: 1 prefix of the lifecycle hashes, 2 how many recent matches to keep, 3 the
--       leader's fencing token ('' for a worker that is not a pool leader), 4 prefix
--       of the archived match JSON, 5 its time to live (s), 6 history length,
--       7 the pool's name, then
--       repeated groups: match id, match JSON,
--       'c' to try, 'a' to abort or 'f' to try fast, status, ready-check deadline
--       ('' none), player count, due time ('' none), status after acceptance,
--       disconnect grace ms, the fill ('' if the match is not one, else
--       'running match id|generation|players per team,...'),
--       ticket count n, n ticket ids, their n enqueue times
--       (ms), then for 'f': created at,
--       1 if the match is not over (else 0), player count p, p pairs: index of the
--       player's first key in KEYS, the player's ticket id
-- Returns {committed ids, of those the ones settled here ('f'), 'f' matches left
-- for the protocol}.
fenced(KEYS[9], ARGV[3])
local leads = ARGV[3] ~= ''
if leads and redis.call('EXISTS', KEYS[12]) == 0 then
  error({err = 'FENCED the pool leader lock lapsed: token ' .. ARGV[3] .. ' no longer holds it'})
end
-- As strings once: Lua formats a number each time it is passed to Redis.
local now = string.format('%d', now_ms())
local history_len = tonumber(ARGV[6])
local pool = ARGV[7]

-- Whether every player of an 'f' group whose pairs start at ARGV[at] is simple:
-- no reservation, and a live-entry hash holding this ticket in this pool alone.
local function simple(at, p)
  local reserved = {}
  for q = 0, p - 1 do reserved[q + 1] = KEYS[tonumber(ARGV[at + 2 * q]) + 2] end
  if redis.call('EXISTS', unpack(reserved)) > 0 then return false end
  for q = 0, p - 1 do
    local k, ticket = tonumber(ARGV[at + 2 * q]), ARGV[at + 2 * q + 1]
    local active = redis.call('HGETALL', KEYS[k])
    if #active ~= 2 or active[2] ~= ticket .. '|' .. pool then return false end
  end
  return true
end

-- The backfill a fill `spec` names and the seats it takes, if it may commit
-- now: (running match id, backfill table, players per team); else nil.
local function fill_room(spec)
  local running, generation, sizes = string.match(spec, '^(.-)|(%d+)|(.*)$')
  if not running then return nil end
  local raw = redis.call('HGET', KEYS[11], running)
  if not raw then return nil end
  local b = cjson.decode(raw)
  if b.closed or tonumber(b.expires_at) <= tonumber(now)
    or tonumber(b.generation) ~= tonumber(generation)
    or redis.call('HGET', ARGV[1] .. running, 'st') ~= 'assigned' then
    return nil
  end
  local need, team = {}, 0
  for n in string.gmatch(sizes, '%d+') do
    team = team + 1
    n = tonumber(n)
    if n > 0 and (tonumber(b.open[team] or 0) < n) then return nil end
    need[team] = n
  end
  return running, b, need
end

-- Settles the players of an 'f' group (as settle.lua would), once simple() said
-- they are.
local function settle(at, p, mid, created, ongoing)
  local ref = mid .. '|' .. pool
  local actives = {}
  for q = 0, p - 1 do
    local k = tonumber(ARGV[at + 2 * q])
    if ongoing then redis.call('SET', KEYS[k + 3], ref, 'EX', ARGV[5]) end
    record_history(KEYS[k + 1], KEYS[k], mid, created, pool, history_len)
    actives[q + 1] = KEYS[k]
  end
  -- Each live-entry hash holds this match's ticket alone (simple()): forgetting
  -- the entry is deleting the hash, all the match's players in one call.
  redis.call('DEL', unpack(actives))
end

local committed, fast, left = {}, {}, {}
local i = 8
while i <= #ARGV do
  local mid, json, try = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local status, deadline, players, due = ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6]
  local next_status, grace, fill = ARGV[i + 7], ARGV[i + 8], ARGV[i + 9]
  local n = tonumber(ARGV[i + 10])
  local first = i + 11
  -- The 'f' extension: created at, ongoing, p, then the pairs.
  local ext, p = first + 2 * n, 0
  if try == 'f' then p = tonumber(ARGV[ext + 2]) end
  local ok = try ~= 'a' and not redis.call('HGET', KEYS[6], mid)
  if ok then
    local ids = {}
    for j = 1, n do ids[j] = ARGV[first + j - 1] end
    local states = redis.call('HMGET', KEYS[1], unpack(ids))
    local held = leads or redis.call('ZMSCORE', KEYS[2], unpack(ids))
    for j = 1, n do
      if states[j] ~= 's' or not (leads or held[j]) then
        ok = false
        break
      end
    end
  end
  local running, bf, need
  if ok and fill ~= '' then
    running, bf, need = fill_room(fill)
    ok = running ~= nil
  end
  if ok and try == 'f' and not simple(ext + 3, p) then
    -- Left for the protocol, untouched.
    left[#left + 1] = mid
  elseif ok then
    local ids, states, enqueued = {}, {}, {}
    local matched = 'm:' .. mid
    for j = 1, n do
      local id = ARGV[first + j - 1]
      ids[#ids + 1] = id
      enqueued[#enqueued + 1] = ARGV[first + n + j - 1]
      states[#states + 1] = id
      states[#states + 1] = matched
    end
    -- The lifecycle hash also lists the tickets and when they joined the match:
    -- the tickets are forgotten with the match (purge.lua), not each on its own.
    local life = {'st', status, 'n', players, 'nx', next_status, 'gr', grace,
      'tk', table.concat(ids, ','), 'at', now}
    if deadline ~= '' then
      life[#life + 1] = 'dl'
      life[#life + 1] = deadline
    end
    if due ~= '' then redis.call('ZADD', KEYS[7], due, mid) end
    if status == 'completed' then
      -- Nothing more happens to it: it may be forgotten after the retention.
      life[#life + 1] = 'set'
      life[#life + 1] = '1'
      redis.call('ZADD', KEYS[4], now, mid)
    end
    redis.call('HSET', ARGV[1] .. mid, unpack(life))
    if running then
      for team, n in ipairs(need) do bf.open[team] = tonumber(bf.open[team]) - n end
      bf.generation = tonumber(bf.generation) + 1
      redis.call('HSET', KEYS[11], running, cjson.encode(bf))
    end
    redis.call('ZREM', KEYS[2], unpack(ids))
    since_remove(KEYS[10], ids, enqueued)
    redis.call('HSET', KEYS[1], unpack(states))
    redis.call('HSET', KEYS[3], mid, json)
    redis.call('SET', ARGV[4] .. mid, json, 'EX', ARGV[5])
    redis.call('HSET', KEYS[6], mid, 'c')
    redis.call('ZADD', KEYS[5], now, mid)
    redis.call('LPUSH', KEYS[8], mid)
    committed[#committed + 1] = mid
    if try == 'f' then
      settle(ext + 3, p, mid, ARGV[ext], ARGV[ext + 1] == '1')
      fast[#fast + 1] = mid
    end
  elseif redis.call('HSETNX', KEYS[6], mid, 'a') == 1 then
    redis.call('ZADD', KEYS[4], now, mid)
  end
  i = ext
  if try == 'f' then i = ext + 3 + 2 * p end
end
if #committed > 0 then redis.call('LTRIM', KEYS[8], 0, tonumber(ARGV[2]) - 1) end
return {committed, fast, left}

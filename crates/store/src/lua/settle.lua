-- Frees players after a committed match: adds the match to each one's history (a
-- field of their ticket index, see record_history; the JSON is archived once, in
-- the pool's slot, at commit), forgets
-- the player's live tickets that the match ended (only if still the ones recorded,
-- so a newer ticket stays), and drops the match's reservation. Idempotent.
--
-- The player's other tickets, and the matched ticket's entries in other pools, must
-- be withdrawn first. In 'check' mode the script settles a player at once when
-- there are none (the common case: one ticket, one pool); otherwise it changes
-- nothing for that player and returns their live tickets for the caller to
-- withdraw, who then calls again in 'force' mode, for that player alone, with the
-- (mode, value) pairs it withdrew.
-- While the match is not over each player is marked as in it (ARGV[7] = 1), which
-- keeps new tickets out; the mark is set first, in both modes, so no ticket can
-- slip in between the two calls.
-- 'check' takes any number of players of the match, five keys each (one slot on a
-- cluster: one player per call there; a single node takes a match's players in one
-- call); 'force' takes one.
-- KEYS, per player: 1 active hash, 2 ticket index hash (and history), 3 the
--       history zset players had before (read only: a match settled by an older
--       version is listed there), 4 reservation string, 5 in-match string
-- ARGV: 1 match id, 2 pool name, 3 created at, 4 history length, 5 ttl s,
--       6 'check' or 'force', 7 1 if the match is not over (else 0), then
--       check: each player's matched ticket id; force: the player's matched ticket
--       id, then pairs: mode, value
-- A player whose history already lists the match is settled already (one script
-- call writes it with the rest) and left alone in 'check' mode: a settle repeated
-- after a crash must not withdraw the tickets queued since.
-- Returns, per player in 'check' mode, {} when settled, else {pools of the matched
-- ticket, mode, value, ...}; {} in 'force' mode.
local ref = ARGV[1] .. '|' .. ARGV[2]
local resv = ARGV[1] .. '|'
local history_len = tonumber(ARGV[4])

-- Settles the player whose keys start at KEYS[k]; `pairs` are (mode, value) pairs
-- to forget, `current` when they were just read (no need to compare again).
local function settle(k, pairs, current)
  local active, index, reservation = KEYS[k], KEYS[k + 1], KEYS[k + 3]
  record_history(index, active, ARGV[1], ARGV[3], ARGV[2], history_len)
  -- The history lives as long as the player's newest ticket or match.
  redis.call('EXPIRE', index, ARGV[5])
  for i = 1, #pairs, 2 do
    if current or redis.call('HGET', active, pairs[i]) == pairs[i + 1] then
      redis.call('HDEL', active, pairs[i])
    end
  end
  local r = redis.call('GET', reservation)
  if r and string.sub(r, 1, #resv) == resv then
    redis.call('DEL', reservation)
  end
end

local function mark(k)
  if ARGV[7] == '1' then redis.call('SET', KEYS[k + 4], ref, 'EX', ARGV[5]) end
end

if ARGV[6] == 'force' then
  mark(1)
  local given = {}
  for i = 9, #ARGV do given[#given + 1] = ARGV[i] end
  settle(1, given, false)
  return {}
end

local out = {}
for p = 0, #KEYS / 5 - 1 do
  local k, ticket = p * 5 + 1, ARGV[8 + p]
  -- Settled already (its history lists the match): a settle repeated after a
  -- crash must not touch the tickets the player has queued since, nor mark them
  -- in a match that may be over.
  if redis.call('HEXISTS', KEYS[k + 1], 'm:' .. ARGV[1]) == 1
    or redis.call('ZSCORE', KEYS[k + 2], ref) then
    out[#out + 1] = {}
  else
    mark(k)
    local active = redis.call('HGETALL', KEYS[k])
    local mine = ticket .. '|' .. ARGV[2]
    local simple = #active > 0
    for i = 2, #active, 2 do
      if active[i] ~= mine then simple = false end
    end
    -- The matched ticket's pools: those its live entry names (written with the
    -- index, by activate.lua), else the index's (less its time, see index_entry).
    local own = ARGV[2]
    if not simple then
      own = string.gsub(redis.call('HGET', KEYS[k + 1], ticket) or ARGV[2], ',@%d+$', '')
      simple = #active == 0 and own == ARGV[2]
    end
    if simple then
      settle(k, active, true)
      out[#out + 1] = {}
    else
      local live = {own}
      for i = 1, #active do live[#live + 1] = active[i] end
      out[#out + 1] = live
    end
  end
end
return out

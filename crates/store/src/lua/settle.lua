-- Frees a player after a committed match: adds the match to the history, forgets
-- the player's live tickets that the match ended (only if still the ones recorded,
-- so a newer ticket stays), and drops the match's reservation. Idempotent.
--
-- The player's other tickets, and the matched ticket's entries in other pools, must
-- be withdrawn first. In 'check' mode the script settles at once when there are
-- none (the common case: one ticket, one pool); otherwise it changes nothing and
-- returns the player's live tickets for the caller to withdraw, who then calls again
-- in 'force' mode with the (mode, value) pairs it withdrew.
-- While the match is not over the player is marked as in it (ARGV[9] = 'MATCH|pool',
-- '' when the match is already over), which keeps new tickets out; the mark is set
-- first, in both modes, so no ticket can slip in between the two calls.
-- KEYS: 1 active hash, 2 ticket index hash, 3 history zset, 4 reservation string,
--       5 in-match string
-- ARGV: 1 match id, 2 pool name, 3 matched ticket id, 4 match JSON, 5 created at,
--       6 history length, 7 ttl s, 8 'check' or 'force', 9 in-match mark, then
--       (force) pairs: mode, value
-- Returns {} when settled, else {pools of the matched ticket, mode, value, ...}.
if ARGV[9] ~= '' then redis.call('SET', KEYS[5], ARGV[9], 'EX', ARGV[7]) end
local function settle(pairs_from)
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -tonumber(ARGV[6]) - 1)
  redis.call('EXPIRE', KEYS[3], ARGV[7])
  for i = 1, #pairs_from, 2 do
    if redis.call('HGET', KEYS[1], pairs_from[i]) == pairs_from[i + 1] then
      redis.call('HDEL', KEYS[1], pairs_from[i])
    end
  end
  local r = redis.call('GET', KEYS[4])
  if r and string.sub(r, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
    redis.call('DEL', KEYS[4])
  end
  return {}
end

if ARGV[8] == 'force' then
  local given = {}
  for i = 10, #ARGV do given[#given + 1] = ARGV[i] end
  return settle(given)
end

local own = redis.call('HGET', KEYS[2], ARGV[3]) or ARGV[2]
local active = redis.call('HGETALL', KEYS[1])
local simple = own == ARGV[2]
for i = 1, #active, 2 do
  if active[i + 1] ~= ARGV[3] .. '|' .. ARGV[2] then simple = false end
end
if simple then return settle(active) end
local out = {own}
for i = 1, #active do out[#out + 1] = active[i] end
return out

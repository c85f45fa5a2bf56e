-- A solo player's new ticket in one call, on a single node (the keys span slots):
-- what `kept_apart`, activate.lua and enqueue.lua (once per pool) do in turn, for
-- the common case. Anything out of the common case changes nothing (beyond the
-- rate charge, which stays charged as an HTTP call would) and is answered for
-- the caller to take the long way:
-- - the player blocked someone: '!blocks|ID,ID,...' (nothing charged yet;
--   the ticket must carry them, so its JSON is written again);
-- - over the rate limit: '!rate|WAIT_US' (as activate.lua);
-- - anything activate.lua would refuse (banned, in a match, a live ticket for
--   the mode, a stale rating): '!refused' (charged already; the long way
--   finds out which, and may find a finished ticket or match to step past).
-- KEYS: 1 player's active hash, 2 ticket index hash, 3 ban string, 4 in-match
--       string, 5 marks hash (as activate.lua), 6 blocks set, 7 the player's
--       limiter (used only when ARGV[7] is not ''), then per pool
--       seven keys as enqueue.lua takes them: queue zset, ticket data hash,
--       state hash, since zset, armed flag, leader lock, arrivals list
-- ARGV: 1 ticket id, 2 mode, 3 the ticket's pools (comma-separated), 4 ttl s,
--       5 the rating version the ticket carries ('' not checked), 6 ticket JSON,
--       7 and 8 the limiter's interval (µs) and burst ('' and '': not charged),
--       9 rating, 10 enqueue time (ms), 11 wake channel, 12 history length (for
--       trim_index), then the pools' names in the order of their keys
-- Returns '=' when queued (in every pool), else one of the answers above.
-- The common case in one call: no block list, no ban, no match.
local out_of_common = redis.call('EXISTS', KEYS[6], KEYS[3], KEYS[4]) > 0
if out_of_common then
  local own = redis.call('SMEMBERS', KEYS[6])
  if #own > 0 then return '!blocks|' .. table.concat(own, ',') end
end
if ARGV[7] ~= '' then
  local now = now_us()
  local tat, got, wait = gcra(tonumber(redis.call('GET', KEYS[7])), now, tonumber(ARGV[7]), tonumber(ARGV[8]), 1)
  if got == 0 then return '!rate|' .. wait end
  gcra_store(KEYS[7], tat, now)
end
-- No block list (an empty set does not exist): banned or in a match.
if out_of_common then return '!refused' end
if ARGV[5] ~= '' and tonumber(redis.call('HGET', KEYS[5], ARGV[2]) or '0') > tonumber(ARGV[5]) then
  return '!refused'
end
local cur = redis.call('HGET', KEYS[1], ARGV[2])
if cur and string.match(cur, '^[^|]*') ~= ARGV[1] then return '!refused' end
-- A ticket id is new (the ingress draws it at random): nothing of it is in
-- any pool yet. Its state is written first, only where there is none; one
-- already there (enqueue.lua's checks are for a retried call, which takes the
-- long way) puts back the states written before it and changes nothing else.
local pools = (#KEYS - 7) / 7
for p = 0, pools - 1 do
  if redis.call('HSETNX', KEYS[10 + 7 * p], ARGV[1], 'q') == 0 then
    for b = 0, p - 1 do redis.call('HDEL', KEYS[10 + 7 * b], ARGV[1]) end
    return '!refused'
  end
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[1] .. '|' .. ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], index_entry(ARGV[3], ARGV[10]))
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
if string.byte(ARGV[1], -1) % 8 == 0 then trim_index(KEYS[2], KEYS[1], tonumber(ARGV[12])) end
for p = 0, pools - 1 do
  local k = 8 + 7 * p
  redis.call('HSET', KEYS[k + 1], ARGV[1], ARGV[6])
  redis.call('ZADD', KEYS[k], ARGV[9], ARGV[1])
  since_add(KEYS[k + 3], ARGV[10], ARGV[1])
  arrived(KEYS[k + 5], KEYS[k + 6], {ARGV[1]})
  wake(KEYS[k + 4], ARGV[11], ARGV[13 + p])
end
return '='

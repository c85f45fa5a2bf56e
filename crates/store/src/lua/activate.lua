-- Makes a ticket the player's live ticket for its mode, compare-and-set: only if the
-- player has none for that mode, or the one it has is ARGV[4] (which the caller
-- found finished). A player may hold one live ticket per mode.
-- A banned player, or one marked as in a match, gets nothing; nor does a ticket
-- whose rating for the player is older than the player's freshness mark (a newer
-- rating was applied or is being applied: the caller reads it and tries again).
-- When the player's ticket-creation limiter is given, the call is charged to it
-- first (GCRA, as `rate.lua`); over the limit, nothing else happens. A charged
-- call stays charged whatever the activation's outcome, as an HTTP call would.
-- On success it also returns whom the player blocked (read in the same call:
-- the ticket carries them; the engine keeps a ticket from those its players
-- blocked and from those who blocked them, reading both tickets' lists).
-- KEYS: 1 player's active hash (mode -> 'TICKET|pool,pool'), 2 player's ticket index hash,
--       3 ban string (until ms), 4 in-match string ('MATCH|pool'), 5 marks hash
--       (mode -> version), 6 the player's block list (set), 7 (optional) the
--       player's limiter
-- ARGV: 1 new ticket id, 2 mode, 3 the ticket's pools (comma-separated),
--       4 expected current ticket id ('' for none), 5 ttl s, 6 the rating version
--       the ticket carries for the player ('' not checked), 7 history length
--       (for trim_index), 8 and 9 the limiter's interval (µs) and burst (with
--       KEYS[7])
-- Returns '=MARK' on success (MARK: the player's freshness mark for the mode, 0
-- if none), then '|' and the players blocked, comma-separated, if any;
-- '!rate|WAIT_US', '!ban|UNTIL', '!match|MATCH|pool', '!stale|VERSION',
-- else the id of the player's current ticket for the mode.
if KEYS[7] then
  local now = now_us()
  local tat, got, wait = gcra(tonumber(redis.call('GET', KEYS[7])), now, tonumber(ARGV[8]), tonumber(ARGV[9]), 1)
  if got == 0 then return '!rate|' .. wait end
  gcra_store(KEYS[7], tat, now)
end
local ban = redis.call('GET', KEYS[3])
if ban then return '!ban|' .. ban end
local busy = redis.call('GET', KEYS[4])
if busy then return '!match|' .. busy end
local mark = tonumber(redis.call('HGET', KEYS[5], ARGV[2]) or '0')
if ARGV[6] ~= '' and mark > tonumber(ARGV[6]) then return '!stale|' .. mark end
local cur = redis.call('HGET', KEYS[1], ARGV[2])
if cur then
  local id = string.match(cur, '^[^|]*')
  if id ~= ARGV[1] and id ~= ARGV[4] then return id end
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[1] .. '|' .. ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], index_entry(ARGV[3], string.format('%d', now_ms())))
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
if string.byte(ARGV[1], -1) % 8 == 0 then trim_index(KEYS[2], KEYS[1], tonumber(ARGV[7])) end
local apart = redis.call('SMEMBERS', KEYS[6])
if #apart == 0 then return '=' .. mark end
return '=' .. mark .. '|' .. table.concat(apart, ',')

-- Frees a player from a match that is over: clears the in-a-match mark (only if it
-- is this match's), bans the player if at fault, and gives a requeued ticket back
-- its place in the player's live tickets. Idempotent.
-- KEYS: 1 in-match string, 2 ban string, 3 active hash
-- ARGV: 1 in-match mark 'MATCH|pool', 2 ban until ms ('' none), 3 ban ttl ms,
--       4 mode, 5 live-ticket value to restore ('' none), 6 ttl s
-- Returns 1.
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if ARGV[2] ~= '' and tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
if ARGV[5] ~= '' then
  if redis.call('HSETNX', KEYS[3], ARGV[4], ARGV[5]) == 1 then
    redis.call('EXPIRE', KEYS[3], ARGV[6])
  end
end
return 1

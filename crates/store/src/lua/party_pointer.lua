-- The party a player is in.
-- KEYS: 1 the player's party pointer
-- ARGV: 1 'claim' or 'release', 2 party id, 3 time to live ms,
--       4 (claim) a stale party the pointer may be taken from, or ''
-- claim: points the player at the party unless they point at another one (other
-- than the stale one); returns '' on success, else the other party's id.
-- release: removes the pointer if it points at the party; returns ''.
local current = redis.call('GET', KEYS[1])
if ARGV[1] == 'release' then
  if current == ARGV[2] then redis.call('DEL', KEYS[1]) end
  return ''
end
if current and current ~= ARGV[2] and current ~= ARGV[4] then
  return current
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return ''

-- Frees a player after a committed match, once the player's other tickets are
-- withdrawn: adds the match to the history, forgets the player's live tickets that
-- the match ended (only if still the ones recorded, so a newer ticket stays), and
-- drops the match's reservation. Idempotent.
-- KEYS: 1 active hash, 2 history zset, 3 reservation string
-- ARGV: 1 match JSON, 2 created at, 3 history length, 4 ttl s, 5 match id,
--       then pairs: mode, expected active value
-- Returns 1.
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[3]) - 1)
redis.call('EXPIRE', KEYS[2], ARGV[4])
for i = 6, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
local r = redis.call('GET', KEYS[3])
if r and string.sub(r, 1, #ARGV[5] + 1) == ARGV[5] .. '|' then
  redis.call('DEL', KEYS[3])
end
return 1

-- Marks a match's pending saga step done, if the match is still in the status the
-- step was for. A match that is over is marked settled and may be forgotten after
-- the retention.
-- KEYS: 1 lifecycle hash, 2 due zset, 3 done zset
-- ARGV: 1 match id, 2 status, 3 '1' if the status is terminal
-- Returns 1 if this call marked it: 0 if the match moved on, or if it is over and
-- was settled already (by an earlier call).
if redis.call('HGET', KEYS[1], 'st') ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[3] == '1' then
  if redis.call('HSETNX', KEYS[1], 'set', '1') == 0 then return 0 end
  redis.call('ZADD', KEYS[3], now_ms(), ARGV[1])
end
return 1

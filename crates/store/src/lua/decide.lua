-- Records a match's one-time decision, unless it has one: 'a' aborts a pending
-- match (the caller found it stale or younger than its own), so its reservations
-- may be taken over and its commit will refuse.
-- KEYS: 1 decisions hash, 2 done zset
-- ARGV: 1 match id
-- Returns the decision that holds: 'c' (committed) or 'a' (aborted).
if redis.call('HSETNX', KEYS[1], ARGV[1], 'a') == 1 then
  redis.call('ZADD', KEYS[2], now_ms(), ARGV[1])
end
return redis.call('HGET', KEYS[1], ARGV[1])

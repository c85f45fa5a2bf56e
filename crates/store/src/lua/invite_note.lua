-- Notes in a player's slot that party ARGV[1] invited them, unless ARGV[2] other
-- parties' invites are noted there already: then returns those parties, for the
-- caller to check (an invite since accepted, withdrawn or disbanded is stale and
-- forgotten with ZREM). Entries older than a party's time to live are dropped
-- first: an untouched party that old is gone.
-- KEYS: 1 the player's invite index (zset: party id -> time noted)
-- ARGV: 1 party id, 2 most pending invites, 3 time to live ms
-- Returns {} when noted, or the parties noted.
local now = now_ms()
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
if not redis.call('ZSCORE', KEYS[1], ARGV[1])
  and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return redis.call('ZRANGE', KEYS[1], 0, -1)
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return {}

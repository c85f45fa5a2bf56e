-- A party's state in one snapshot.
-- KEYS: 1 member adds, 2 member tombstones, 3 invite adds, 4 invite tombstones, 5 meta
-- Returns {member adds (tag, player, ...), member tombstones, invite adds,
-- invite tombstones, meta (field, value, ...)}; meta is empty if there is no party.
return {
  redis.call('HGETALL', KEYS[1]), redis.call('SMEMBERS', KEYS[2]),
  redis.call('HGETALL', KEYS[3]), redis.call('SMEMBERS', KEYS[4]),
  redis.call('HGETALL', KEYS[5]),
}

-- A player's last event socket on an ingress closed (see mm_store::Online).
-- Notes when, and keeps the player's notes until ARGV[3] unless another
-- ingress still holds a socket of theirs open: a player who left is
-- remembered for ONLINE_KEPT, not for the day an open note is kept.
-- KEYS: 1 the player's notes (hash: ingress -> 'o' or when its last closed)
-- ARGV: 1 the ingress, 2 now (ms), 3 when to forget the notes (ms)
-- Returns 1 when the notes' expiry was set, 0 when another ingress holds one.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
for _, note in ipairs(redis.call('HVALS', KEYS[1])) do
  if note == 'o' then
    return 0
  end
end
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return 1

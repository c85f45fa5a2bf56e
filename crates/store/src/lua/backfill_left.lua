-- Records that a player left a running match ('l:PLAYER' -> when, in its
-- lifecycle hash; the first time counts): only while the match is assigned and
-- (unless the caller is trusted) by the server hosting it.
-- KEYS: 1 the match's lifecycle hash
-- ARGV: 1 the calling server's id ('' for a trusted backend), 2 the player
-- Returns 1 if recorded (or already), 0 if refused.
if redis.call('HGET', KEYS[1], 'st') ~= 'assigned' then return 0 end
if ARGV[1] ~= '' then
  local srv = redis.call('HGET', KEYS[1], 'srv')
  if not srv or (cjson.decode(srv).server_id or '') ~= ARGV[1] then return 0 end
end
redis.call('HSETNX', KEYS[1], 'l:' .. ARGV[2], now_ms())
return 1

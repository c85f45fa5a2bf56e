-- Keeps a running match's live backfill open for another time to live, without
-- changing it (the generation stays): a game server's heartbeat. Only while
-- the match is assigned and (unless the caller is trusted) by its host.
-- KEYS: 1 the match's lifecycle hash, 2 the pool's backfills hash
-- ARGV: 1 match id, 2 the calling server's id ('' for a trusted backend),
--       3 time to live (ms)
-- Returns 1 if refreshed, 0 if there was no live backfill (or not the caller's).
if redis.call('HGET', KEYS[1], 'st') ~= 'assigned' then return 0 end
if ARGV[2] ~= '' then
  local srv = redis.call('HGET', KEYS[1], 'srv')
  if not srv or (cjson.decode(srv).server_id or '') ~= ARGV[2] then return 0 end
end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return 0 end
local b = cjson.decode(raw)
local now = now_ms()
if b.closed or tonumber(b.expires_at) <= now then return 0 end
b.expires_at = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(b))
return 1

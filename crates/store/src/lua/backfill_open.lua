-- Opens a running match's backfill, or changes its seats: only while the match
-- is assigned, and (unless the caller is trusted) by the server hosting it. The
-- generation goes up by one at every change, across closes.
-- KEYS: 1 the match's lifecycle hash, 2 the pool's backfills hash
-- ARGV: 1 match id, 2 the calling server's id ('' for a trusted backend),
--       3 open seats per team (a JSON array, not empty), 4 time to live (ms)
-- Returns {'open', backfill JSON}, {'no_match'}, {'not_running', status} or
-- {'not_yours'}.
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'no_match'} end
if st ~= 'assigned' then return {'not_running', st} end
local host = ''
local srv = redis.call('HGET', KEYS[1], 'srv')
if srv then host = cjson.decode(srv).server_id or '' end
if ARGV[2] ~= '' and ARGV[2] ~= host then return {'not_yours'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local generation, opened_at = 1, now
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old then
  local o = cjson.decode(old)
  generation = tonumber(o.generation) + 1
  if not o.closed and tonumber(o.expires_at) > now then opened_at = tonumber(o.opened_at) end
end
local b = cjson.encode({
  match_id = ARGV[1],
  server_id = host,
  open = cjson.decode(ARGV[3]),
  generation = generation,
  opened_at = opened_at,
  expires_at = now + tonumber(ARGV[4]),
  closed = false,
})
redis.call('HSET', KEYS[2], ARGV[1], b)
return {'open', b}

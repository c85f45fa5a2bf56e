-- Closes a running match's backfill (by the server hosting it, unless the caller
-- is trusted): it stays as a closed entry, one generation on, so that a fill
-- that read it before cannot land. A match that is over is closed already.
-- KEYS: 1 the match's lifecycle hash, 2 the pool's backfills hash
-- ARGV: 1 match id, 2 the calling server's id ('' for a trusted backend)
-- Returns {'closed'}, {'no_match'} or {'not_yours'}.
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'no_match'} end
if st == 'assigned' and ARGV[2] ~= '' then
  local host = ''
  local srv = redis.call('HGET', KEYS[1], 'srv')
  if srv then host = cjson.decode(srv).server_id or '' end
  if ARGV[2] ~= host then return {'not_yours'} end
end
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old then
  local o = cjson.decode(old)
  if not o.closed then
    o.closed = true
    o.generation = tonumber(o.generation) + 1
    redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(o))
  end
end
return {'closed'}

-- Opens a running match's backfill, or changes its seats: only while the match
-- is assigned, and (unless the caller is trusted) by the server hosting it. The
-- generation goes up by one at every change, across closes. With a seat open it
-- wakes the workers of the pool (a wake-up on the channel ARGV[5]), so the seat
-- is filled at once rather than at their next poll.
-- KEYS: 1 the match's lifecycle hash, 2 the pool's backfills hash
-- ARGV: 1 match id, 2 the calling server's id ('' for a trusted backend),
--       3 open seats per team (a JSON array, not empty), 4 time to live (ms),
--       5 the wake-up channel, 6 the pool's name
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
local open = cjson.decode(ARGV[3])
local b = cjson.encode({
  match_id = ARGV[1],
  server_id = host,
  open = open,
  generation = generation,
  opened_at = opened_at,
  expires_at = now + tonumber(ARGV[4]),
  closed = false,
})
redis.call('HSET', KEYS[2], ARGV[1], b)
for _, n in ipairs(open) do
  if tonumber(n) > 0 then
    redis.call('PUBLISH', ARGV[5], ARGV[6])
    break
  end
end
return {'open', b}

-- The live backfills of a pool, or of one match: not closed, not lapsed, and
-- their match still assigned.
-- KEYS: 1 the pool's backfills hash
-- ARGV: 1 prefix of the matches' lifecycle hashes, 2 a match id ('' for all)
-- Returns the backfills' JSON.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local entries = {}
if ARGV[2] ~= '' then
  local one = redis.call('HGET', KEYS[1], ARGV[2])
  if one then entries = {ARGV[2], one} end
else
  entries = redis.call('HGETALL', KEYS[1])
end
local out = {}
for i = 1, #entries, 2 do
  local o = cjson.decode(entries[i + 1])
  if not o.closed and tonumber(o.expires_at) > now
    and redis.call('HGET', ARGV[1] .. entries[i], 'st') == 'assigned' then
    out[#out + 1] = entries[i + 1]
  end
end
return out

-- GCRA rate-limit checks, timed by the server's clock (microseconds), for every
-- check of a batch of requests in one call (on a cluster, the keys of one slot).
-- KEYS[i] a limiter's key (holds its theoretical arrival time, TAT); a key may
--   come several times (requests sharing an address), counted in order
-- ARGV[2i-1] its emission interval: microseconds one call uses up
-- ARGV[2i] its burst: calls allowed at once
-- Returns, per check, 0 when the call is allowed (and charged), else the
-- microseconds until it would be. Each key is read and written once per call.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats = {}
local charged = {}
local out = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local tat = tats[key]
  if tat == nil then
    tat = tonumber(redis.call('GET', key)) or now
  end
  if tat < now then
    tat = now
  end
  local new_tat = tat + interval
  local allow_at = new_tat - interval * burst
  if allow_at > now then
    out[i] = math.ceil(allow_at - now)
    tats[key] = tat
  else
    out[i] = 0
    tats[key] = new_tat
    charged[key] = true
  end
end
for key in pairs(charged) do
  local tat = tats[key]
  redis.call('SET', key, string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
end
return out

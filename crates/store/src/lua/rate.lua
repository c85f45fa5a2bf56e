-- GCRA rate-limit checks, timed by the server's clock (microseconds): one per key,
-- in one call (on a cluster the caller sends one key per call, each in its slot).
-- KEYS[i] a limiter's key (holds its theoretical arrival time, TAT)
-- ARGV[2i-1] its emission interval: microseconds one call uses up
-- ARGV[2i] its burst: calls allowed at once
-- Returns, per key, 0 when the call is allowed (and charged), else the
-- microseconds until it would be.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then
    tat = now
  end
  local new_tat = tat + interval
  local allow_at = new_tat - interval * burst
  if allow_at > now then
    out[i] = math.ceil(allow_at - now)
  else
    redis.call('SET', key, string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
    out[i] = 0
  end
end
return out

-- One GCRA rate-limit check, timed by the server's clock (microseconds).
-- KEYS[1] the limiter's key (holds the theoretical arrival time, TAT)
-- ARGV[1] emission interval: microseconds one call uses up
-- ARGV[2] burst: calls allowed at once
-- Returns 0 when the call is allowed (and charged), else the microseconds until
-- it would be.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then
  tat = now
end
local new_tat = tat + interval
local allow_at = new_tat - interval * burst
if allow_at > now then
  return math.ceil(allow_at - now)
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return 0

-- GCRA rate-limit checks, timed by the server's clock (microseconds), for every
-- check of a batch of requests in one call (on a cluster, the keys of one slot).
-- KEYS[i] a limiter's key (holds its theoretical arrival time, TAT); a key may
--   come several times (requests sharing an address), counted in order
-- ARGV[2i-1] its emission interval: microseconds one call uses up
-- ARGV[2i] its burst: calls allowed at once
-- Returns, per check, 0 when the call is allowed (and charged), else the
-- microseconds until it would be. Each key is read and written once per call.
local now = now_us()
local tats = {}
local charged = {}
local out = {}
for i, key in ipairs(KEYS) do
  local tat = tats[key]
  if tat == nil then
    tat = tonumber(redis.call('GET', key))
  end
  local wait
  tat, wait = gcra(tat, now, tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i]))
  tats[key] = tat
  out[i] = wait
  if wait == 0 then charged[key] = true end
end
for key in pairs(charged) do
  gcra_store(key, tats[key], now)
end
return out

-- GCRA rate-limit checks, timed by the server's clock (microseconds), for every
-- limiter a batch of requests needs in one call (on a cluster, the keys of one
-- slot).
-- KEYS[i] a limiter's key (holds its theoretical arrival time, TAT), each once
-- ARGV[3i-2] its emission interval: microseconds one call uses up
-- ARGV[3i-1] its burst: calls allowed at once
-- ARGV[3i] the calls wanted of it (the batch's requests, and any an ingress
--   takes ahead for an address it sees many calls from)
-- Returns, per key, the calls granted (charged: as many of those wanted as fit)
-- and, when fewer than wanted, the microseconds until one more would be (else
-- 0). Each key is read and written once.
local now = now_us()
local out = {}
for i, key in ipairs(KEYS) do
  local tat, got, wait = gcra(tonumber(redis.call('GET', key)), now,
    tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i]))
  if got > 0 then gcra_store(key, tat, now) end
  out[2 * i - 1] = got
  out[2 * i] = wait
end
return out

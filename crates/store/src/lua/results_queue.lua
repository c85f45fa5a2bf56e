-- Queues a finished match's result for the rating service directly: results
-- recorded elsewhere (imports, benchmarks). The server manager's results are
-- queued by transition.lua in the step that completes the match. Once per match.
-- KEYS: 1 results hash, 2 results zset
-- ARGV: 1 match id, 2 job JSON
-- Returns 1 when queued, 0 when the match was queued already.
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[2], now_ms(), ARGV[1])
  return 1
end
return 0

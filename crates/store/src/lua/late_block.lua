-- A block or unblock made while a ticket waits (see blocks.rs,
-- `Blocks::keep_apart_waiting` and `Blocks::release_waiting`): rewrites the
-- ticket's data in this pool to the caller's copy, which adds the players it
-- must not meet (or takes out one it may meet now, or only counts the
-- rewrite), if the data is still the copy the caller read (else 'changed':
-- read it again). The data is rewritten whatever the ticket's
-- state: a matched ticket whose match ends before play goes back to the queue
-- with this data (unwind_entry.lua). A ticket held ('s') is taken from its
-- holder (unless ARGV[7] is '0': the copy's list did not change), so that a
-- match formed from the copy without the block cannot commit (complete.lua
-- commits only tickets held, in state 's'), and the holder reads it again:
-- - by the pool's leader (it stays in the queue while read): it reads as
--   requeued ('r') and is pushed to the arrivals again, for the leader to
--   read the new copy;
-- - by a claim worker (in its held set): it goes back to the queue with its
--   score, requeued, the worker's held set without it.
-- KEYS: 1 ticket data hash, 2 state hash, 3 queue zset, 4 leases zset,
--       5 the pool leader's lock, 6 arrivals list, 7 armed flag
-- ARGV: 1 ticket id, 2 the data read, 3 the new data, 4 prefix of the workers'
--       held sets, 5 wake channel, 6 pool name, 7 '1' to take a held ticket
--       from its holder, '0' not to
-- Returns 'gone' (no data here), 'changed', 'kept' (not held: rewritten only)
-- or 'taken' (rewritten and taken from its holder).
local id = ARGV[1]
local data = redis.call('HGET', KEYS[1], id)
if not data then return 'gone' end
if data ~= ARGV[2] then return 'changed' end
redis.call('HSET', KEYS[1], id, ARGV[3])
if ARGV[7] == '0' or redis.call('HGET', KEYS[2], id) ~= 's' then return 'kept' end
if not redis.call('ZSCORE', KEYS[3], id) then
  local taken = false
  for _, w in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
    local held = ARGV[4] .. w
    local score = redis.call('ZSCORE', held, id)
    if score then
      redis.call('ZREM', held, id)
      redis.call('ZADD', KEYS[3], score, id)
      taken = true
      break
    end
  end
  -- Held by a worker whose lease is gone: reclaim.lua requeues it, with this data.
  if not taken then return 'kept' end
end
redis.call('HSET', KEYS[2], id, 'r')
arrived(KEYS[5], KEYS[6], {id})
wake(KEYS[7], ARGV[5], ARGV[6])
return 'taken'

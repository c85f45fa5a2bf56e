-- Marks a fill that joined its running match: its players were told ('nt'), or
-- the game server acknowledged them ('ak', which makes the fill's saga due now
-- to finish its step). Only while the fill is assigned.
-- KEYS: 1 the fill's lifecycle hash, 2 due zset
-- ARGV: 1 fill id, 2 the mark ('nt' or 'ak')
-- Returns 1 if marked (or already), 0 if the fill is not a joined, assigned one.
if redis.call('HGET', KEYS[1], 'st') ~= 'assigned' then return 0 end
if not redis.call('HGET', KEYS[1], 'jat') then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], '1')
if ARGV[2] == 'ak' then redis.call('ZADD', KEYS[2], now_ms(), ARGV[1]) end
return 1

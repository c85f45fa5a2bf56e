-- Forgets tickets and matches that finished before ARGV[1] (ms), in chunks.
-- A match takes its tickets with it: those its lifecycle hash lists ('tk', written
-- by complete.lua) whose state still names the match (a ticket handed back since
-- has moved on: requeued, or ended with a done entry of its own).
-- KEYS: 1 ticket data hash, 2 state hash, 3 matches hash, 4 done zset, 5 decisions hash,
--       6 since zset (see since_add), 7 backfills hash
-- ARGV: 1 cutoff ms, 2 chunk size, 3 prefix of the lifecycle hashes
-- Returns how many tickets and matches were forgotten: a full chunk or more when
-- there may be more to forget.
local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #old == 0 then return 0 end
local chunk = tonumber(ARGV[2])
-- Entries are taken in order until the chunk's worth of tickets and matches is
-- reached (a match of many tickets counts them all), so one call stays short.
local tickets, matches, taken, alone = {}, {}, {}, {}
for _, id in ipairs(old) do
  if #tickets + #matches >= chunk then break end
  taken[#taken + 1] = id
  if string.sub(id, 1, 2) ~= 'm-' then
    tickets[#tickets + 1] = id
    alone[#alone + 1] = id
  else
    matches[#matches + 1] = id
    local life = ARGV[3] .. id
    local listed = redis.call('HGET', life, 'tk')
    if listed then
      local ids = {}
      for t in string.gmatch(listed, '[^,]+') do ids[#ids + 1] = t end
      local states = redis.call('HMGET', KEYS[2], unpack(ids))
      for i, t in ipairs(ids) do
        if states[i] == 'm:' .. id then tickets[#tickets + 1] = t end
      end
    end
    redis.call('DEL', life)
  end
end
-- Tickets that ended on their own (cancelled, withdrawn, ended by their match)
-- may still be in the waiting-since index: their data says their second.
if #alone > 0 then
  local ids, mss = {}, {}
  for i, data in ipairs(redis.call('HMGET', KEYS[1], unpack(alone))) do
    local ok, t = pcall(cjson.decode, data)
    if ok and type(t) == 'table' and tonumber(t.enqueued_at) then
      ids[#ids + 1] = alone[i]
      mss[#mss + 1] = t.enqueued_at
    end
  end
  if #ids > 0 then since_remove(KEYS[6], ids, mss) end
end
if #tickets > 0 then
  redis.call('HDEL', KEYS[1], unpack(tickets))
  redis.call('HDEL', KEYS[2], unpack(tickets))
end
if #matches > 0 then
  redis.call('HDEL', KEYS[3], unpack(matches))
  redis.call('HDEL', KEYS[5], unpack(matches))
  redis.call('HDEL', KEYS[7], unpack(matches))
end
redis.call('ZREM', KEYS[4], unpack(taken))
return #tickets + #matches

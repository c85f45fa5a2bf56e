-- Merges a party delta into the party: OR-Set unions for members and invites,
-- the leader whose tag is larger, and `gone` once disbanded. Refuses (writing
-- nothing) a delta that would leave more than ARGV[1] members.
-- KEYS: 1 member adds (tag -> player), 2 member tombstones, 3 invite adds,
--       4 invite tombstones, 5 meta
-- ARGV: 1 most members (0: any), 2 time to live ms, 3 created, 4 leader, 5 leader tag,
--       6 '1' disbanded, then four lists, each a count and its items:
--       member adds (tag, player pairs), member tombstones, invite adds (pairs),
--       invite tombstones
-- Returns 'FULL', or the party after the merge (see party_read.lua).
local max = tonumber(ARGV[1])
local i = 7
local function list(pairs_of)
  local n = tonumber(ARGV[i])
  local items = {}
  local width = pairs_of and 2 or 1
  for k = 1, n * width do
    items[k] = ARGV[i + k]
  end
  i = i + n * width + 1
  return items
end
local madds = list(true)
local mtombs = list(false)
local iadds = list(true)
local itombs = list(false)

if max > 0 and #madds > 0 then
  local tomb = {}
  for _, t in ipairs(redis.call('SMEMBERS', KEYS[2])) do tomb[t] = true end
  for _, t in ipairs(mtombs) do tomb[t] = true end
  local live, n = {}, 0
  local function count(tag, player)
    if not tomb[tag] and not live[player] then
      live[player] = true
      n = n + 1
    end
  end
  local stored = redis.call('HGETALL', KEYS[1])
  for k = 1, #stored, 2 do count(stored[k], stored[k + 1]) end
  for k = 1, #madds, 2 do count(madds[k], madds[k + 1]) end
  if n > max then return 'FULL' end
end

if #madds > 0 then redis.call('HSET', KEYS[1], unpack(madds)) end
if #mtombs > 0 then redis.call('SADD', KEYS[2], unpack(mtombs)) end
if #iadds > 0 then redis.call('HSET', KEYS[3], unpack(iadds)) end
if #itombs > 0 then redis.call('SADD', KEYS[4], unpack(itombs)) end
local created = redis.call('HGET', KEYS[5], 'created')
if not created or tonumber(ARGV[3]) < tonumber(created) then
  redis.call('HSET', KEYS[5], 'created', ARGV[3])
end
local ltag = redis.call('HGET', KEYS[5], 'ltag')
local leader = redis.call('HGET', KEYS[5], 'leader')
if not ltag or ARGV[5] > ltag or (ARGV[5] == ltag and ARGV[4] > leader) then
  redis.call('HSET', KEYS[5], 'leader', ARGV[4], 'ltag', ARGV[5])
end
if ARGV[6] == '1' then redis.call('HSET', KEYS[5], 'gone', '1') end
for k = 1, 5 do
  if redis.call('EXISTS', KEYS[k]) == 1 then redis.call('PEXPIRE', KEYS[k], ARGV[2]) end
end
return {
  redis.call('HGETALL', KEYS[1]), redis.call('SMEMBERS', KEYS[2]),
  redis.call('HGETALL', KEYS[3]), redis.call('SMEMBERS', KEYS[4]),
  redis.call('HGETALL', KEYS[5]),
}

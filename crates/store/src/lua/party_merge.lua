-- Merges a party delta into the party: OR-Set unions for members and invites,
-- the leader whose tag is larger, and `gone` once disbanded. Refuses (writing
-- nothing) a delta that adds members beyond ARGV[1], or invites beyond ARGV[2]
-- pending.
-- KEYS: 1 member adds (tag -> player), 2 member tombstones, 3 invite adds,
--       4 invite tombstones, 5 meta
-- ARGV: 1 most members (0: any), 2 most pending invites (0: any), 3 time to live
--       ms, 4 created, 5 leader, 6 leader tag, 7 '1' disbanded, then four lists,
--       each a count and its items: member adds (tag, player pairs), member
--       tombstones, invite adds (pairs), invite tombstones
-- Returns 'FULL', 'INVITES', or the party after the merge (see party_read.lua).
local max = tonumber(ARGV[1])
local max_invites = tonumber(ARGV[2])
local i = 8
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

-- Distinct players with a tag in the adds (stored and new) that no tombstone
-- (stored or new) removes: the set's elements after the merge.
local function live_after(adds_key, tombs_key, adds, tombs)
  local tomb = {}
  for _, t in ipairs(redis.call('SMEMBERS', tombs_key)) do tomb[t] = true end
  for _, t in ipairs(tombs) do tomb[t] = true end
  local live, n = {}, 0
  local function count(tag, player)
    if not tomb[tag] and not live[player] then
      live[player] = true
      n = n + 1
    end
  end
  local stored = redis.call('HGETALL', adds_key)
  for k = 1, #stored, 2 do count(stored[k], stored[k + 1]) end
  for k = 1, #adds, 2 do count(adds[k], adds[k + 1]) end
  return n
end

if max > 0 and #madds > 0 and live_after(KEYS[1], KEYS[2], madds, mtombs) > max then
  return 'FULL'
end
if max_invites > 0 and #iadds > 0 and live_after(KEYS[3], KEYS[4], iadds, itombs) > max_invites then
  return 'INVITES'
end

if #madds > 0 then redis.call('HSET', KEYS[1], unpack(madds)) end
if #mtombs > 0 then redis.call('SADD', KEYS[2], unpack(mtombs)) end
if #iadds > 0 then redis.call('HSET', KEYS[3], unpack(iadds)) end
if #itombs > 0 then redis.call('SADD', KEYS[4], unpack(itombs)) end
local created = redis.call('HGET', KEYS[5], 'created')
if not created or tonumber(ARGV[4]) < tonumber(created) then
  redis.call('HSET', KEYS[5], 'created', ARGV[4])
end
local ltag = redis.call('HGET', KEYS[5], 'ltag')
local leader = redis.call('HGET', KEYS[5], 'leader')
if not ltag or ARGV[6] > ltag or (ARGV[6] == ltag and ARGV[5] > leader) then
  redis.call('HSET', KEYS[5], 'leader', ARGV[5], 'ltag', ARGV[6])
end
if ARGV[7] == '1' then redis.call('HSET', KEYS[5], 'gone', '1') end
for k = 1, 5 do
  if redis.call('EXISTS', KEYS[k]) == 1 then redis.call('PEXPIRE', KEYS[k], ARGV[3]) end
end
return {
  redis.call('HGETALL', KEYS[1]), redis.call('SMEMBERS', KEYS[2]),
  redis.call('HGETALL', KEYS[3]), redis.call('SMEMBERS', KEYS[4]),
  redis.call('HGETALL', KEYS[5]),
}

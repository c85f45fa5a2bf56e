-- Shared helpers, prepended to the scripts that use them at compile time.

-- Redis server time in milliseconds: every process shares this clock.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Returns the given tickets held in worker set `held` to queue `q`, keeping their
-- rating score. Tickets cancelled while held are dropped (they are already final);
-- tickets not held by this worker are left alone. Returns how many were requeued.
local function requeue(q, st, held, ids)
  local back, states, gone = {}, {}, {}
  for _, id in ipairs(ids) do
    local score = redis.call('ZSCORE', held, id)
    if score then
      gone[#gone + 1] = id
      if redis.call('HGET', st, id) == 's' then
        back[#back + 1] = score
        back[#back + 1] = id
        states[#states + 1] = id
        states[#states + 1] = 'r'
      end
    end
  end
  if #gone > 0 then redis.call('ZREM', held, unpack(gone)) end
  if #back > 0 then
    redis.call('ZADD', q, unpack(back))
    redis.call('HSET', st, unpack(states))
  end
  return #back / 2
end

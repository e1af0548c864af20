/**
 * The warm pool's Lua scripts. Each runs atomically inside Redis, which is what makes a claim one
 * step: no two spawns, on any replica, can take the same slot. Keys are built from the prefix
 * inside the scripts (all under one `{prefix}` hash tag); see docs/worker.md "Pool in Redis".
 */

/**
 * KEYS: session hash, idle list. ARGV: prefix, sessionId, now (s), spawn JSON, record TTL (s),
 * trace id, span id, interview id, seconds a room must still be valid for.
 * Returns {'existing'|'claimed', roomName, roomUrl, roomExp, claimedAt, slot, pod} or {'none'}.
 * Idempotent per session while its bot lives or after it completed; a failed session claims anew.
 */
export const CLAIM = `
local existing = redis.call('HMGET', KEYS[1], 'roomName', 'roomUrl', 'roomExp', 'claimedAt', 'slot', 'pod', 'state')
-- A repeat gets the same room, except after the session's bot failed: then the respondent is
-- retrying, and a fresh slot and room are claimed below (the failed record is replaced).
if existing[1] and existing[7] ~= 'failed' then
  return {'existing', existing[1], existing[2], existing[3], existing[4], existing[5], existing[6]}
end
local now = tonumber(ARGV[3])
while true do
  local slot = redis.call('LPOP', KEYS[2])
  if not slot then return {'none'} end
  local skey = ARGV[1] .. ':slot:' .. slot
  local s = redis.call('HMGET', skey, 'pod', 'state', 'roomName', 'roomUrl', 'roomExp')
  if s[1] and s[2] == 'idle' then
    local alive = redis.call('EXISTS', ARGV[1] .. ':pod:' .. s[1] .. ':alive') == 1
    if not alive then
      -- The owner stopped heartbeating: the slot leaves the pool (its pod re-registers it if it comes back).
      redis.call('HSET', skey, 'state', 'lapsed')
    elseif tonumber(s[5]) > now + tonumber(ARGV[9]) then
      redis.call('HSET', skey, 'state', 'busy', 'session', ARGV[2])
      -- The claim number (1, then one more per retry after a failure). Its field keeps the stored
      -- name 'attempt' so that records written by earlier releases still count on.
      local claim_number = (tonumber(redis.call('HGET', KEYS[1], 'attempt')) or 0) + 1
      redis.call('DEL', KEYS[1])
      redis.call('HSET', KEYS[1], 'attempt', claim_number, 'sessionId', ARGV[2], 'interviewId', ARGV[8], 'slot', slot, 'pod', s[1],
        'roomName', s[3], 'roomUrl', s[4], 'roomExp', s[5], 'claimedAt', ARGV[3], 'state', 'assigned',
        'spawn', ARGV[4], 'traceId', ARGV[6], 'spanId', ARGV[7])
      redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
      redis.call('RPUSH', ARGV[1] .. ':pod:' .. s[1] .. ':inbox', ARGV[2])
      return {'claimed', s[3], s[4], s[5], ARGV[3], slot, s[1]}
    end
    -- else: its room expires too soon; the owner refreshes the room and puts the slot back.
  end
end
`;

/**
 * KEYS: slot hash, idle list, the pod's slot set. ARGV: slotId, pod, roomName, roomUrl, roomExp,
 * force ('1' after the pod finished the slot's session). Without force a slot that is busy
 * (claimed, its assignment still on the way through the inbox) is left alone.
 */
export const REGISTER_IDLE = `
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'busy' and ARGV[6] ~= '1' then return 0 end
redis.call('HSET', KEYS[1], 'pod', ARGV[2], 'state', 'idle', 'roomName', ARGV[3], 'roomUrl', ARGV[4], 'roomExp', ARGV[5], 'session', '')
redis.call('SADD', KEYS[3], ARGV[1])
if not redis.call('LPOS', KEYS[2], ARGV[1]) then redis.call('RPUSH', KEYS[2], ARGV[1]) end
return 1
`;

/** KEYS: idle list. ARGV: prefix, slotIds... Takes idle slots out of the pool; returns those withdrawn. */
export const WITHDRAW = `
local out = {}
for i = 2, #ARGV do
  local skey = ARGV[1] .. ':slot:' .. ARGV[i]
  local state = redis.call('HGET', skey, 'state')
  if state ~= 'busy' then
    redis.call('LREM', KEYS[1], 0, ARGV[i])
    redis.call('HSET', skey, 'state', 'withdrawn')
    table.insert(out, ARGV[i])
  end
end
return out
`;

/**
 * KEYS: pod set, idle list. ARGV: prefix, pod, failure outcome JSON. Removes a pod whose heartbeat
 * lapsed: its slots leave the pool and its unfinished sessions are marked failed. Returns those
 * session ids, for the reaper to report. Only one reaper wins (SREM).
 */
export const REAP = `
local p = ARGV[1]
if redis.call('EXISTS', p .. ':pod:' .. ARGV[2] .. ':alive') == 1 then return {} end
if redis.call('SREM', KEYS[1], ARGV[2]) == 0 then return {} end
local failed = {}
local slots = redis.call('SMEMBERS', p .. ':pod:' .. ARGV[2] .. ':slots')
for _, slot in ipairs(slots) do
  local skey = p .. ':slot:' .. slot
  redis.call('LREM', KEYS[2], 0, slot)
  local s = redis.call('HMGET', skey, 'state', 'session')
  if s[1] == 'busy' and s[2] and s[2] ~= '' then
    local sk = p .. ':session:' .. s[2]
    local st = redis.call('HGET', sk, 'state')
    if st == 'assigned' or st == 'running' then
      redis.call('HSET', sk, 'state', 'failed', 'outcome', ARGV[3])
      table.insert(failed, s[2])
    end
  end
  redis.call('DEL', skey)
end
redis.call('DEL', p .. ':pod:' .. ARGV[2] .. ':slots', p .. ':pod:' .. ARGV[2] .. ':inbox')
return failed
`;

/** KEYS: session hash. ARGV: from-state, to-state. Moves a session only from the given state. */
export const TRANSITION = `
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
return 1
`;

/**
 * KEYS: session hash. ARGV: field, value pairs. Writes only into a record that exists: after a
 * Redis wipe an outcome write must not create a session key without a TTL (the outbox keeps the report).
 */
export const UPDATE_EXISTING = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

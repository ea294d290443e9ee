'use strict'
// The Redis side of a fleet budget: one Lua script, run in one round trip per
// sync, through whichever client the caller gave (ioredis or node-redis v5+).
//
// Keys of budget `key` (one hash slot: the `{key}` hash tag, for Redis Cluster):
//   captcha-budget:{key}:buckets  hash: s<K> / f<K> = successes / failures of
//                                 fleet bucket K; width = the bucket width (ms);
//                                 objective = the SLO every worker must share (JSON:
//                                 targetRate, windowMs, bucketMs); config = the
//                                 first worker's SLO config JSON (for the gate);
//                                 epoch (set when the hash is created), version
//                                 (bumped by every batch), low (buckets below
//                                 are gone), n (members of `changes` after the
//                                 last sync), q<worker id> = "<last applied
//                                 seq>:<seen at ms>" (what exactly-once rests on)
//   captcha-budget:{key}:changes  sorted set: K scored by the version that last changed it
//   captcha-budget:{key}:workers  hash: worker id = "<last applied seq>:<seen at ms>"
//                                 (a copy of the q fields, small enough to scan
//                                 every sync for the live workers)
// All expire a window (plus two buckets) after the last sync. A sync returns
// only the buckets changed since the version its worker last saw (all of
// them on its first sync, or when the hash was re-created): a few buckets, not
// the window, in the steady state.
//
// The script runs in steps, each a block below: (1) the worker's clock against
// the server's `TIME`, (2) the worker's SLO against the key's, (3) a partial
// key set (an eviction) repaired, (4) expiry bounded by the server's time,
// (5) the batch applied once, (6) the reply. A refusal (1, 2, a corrupt or
// expired bucket) is an error reply whose first word says which
// (FLEETCLOCK, FLEETSLO, FLEETCORRUPT, FLEETBEHIND), raised before anything
// is written; sync.js turns it into a FleetSyncError with a readable message.

// ARGV: 1 worker id, 2 seq, 3 bucket width, 4 oldest live bucket K, 5 ttl ms,
// 6 now ms, 7 "active" ms, 8 config JSON, 9 the epoch and 10 the version the
// worker last saw, 11 the SLO JSON, 12 windowMs, 13 the clock skew allowed
// (ms), then K / successes / failures triples from 14 on.
// Reply: { applied (1, or 0 for a seq already applied), active workers, epoch,
// version, complete (1: every bucket, 0: the changed ones), repaired (the
// names of the keys found missing, space-separated, or ''), K, s, f, … }.
const crypto = require('node:crypto')

const FIRST = 14
// Pieces of the script the family store (family-store.js) runs too: they use
// `now`, `width`, `slo`, `maxSkew` and ARGV[13] as set above them, and define MAX,
// corrupt(), count(), t / server (the server's TIME) and meta (width, epoch,
// version, low, objective, n of the buckets hash).
const LUA_COUNT = `local MAX = 9007199254740991

-- A refused stored value: its field and (hex, the first 64 bytes: Redis
-- appends its own words to an error raised in a script) the value.
local function corrupt(field, v)
  local hex = string.gsub(string.sub(v, 1, 64), '.', function(c) return string.format('%02x', string.byte(c)) end)
  error({err = 'FLEETCORRUPT ' .. field .. ' ' .. hex})
end

-- A stored count: a whole number from 0 to 2^53 - 1, else the key is corrupt.
local function count(field, v)
  if v == false or v == nil then return 0 end
  local n = tonumber(v)
  if not string.match(v, '^%d+$') or not n or n > MAX then corrupt(field, v) end
  return n
end

-- Adds a pushed change to a stored count (in \`buckets\`). A negative one (a success
-- rejected after it was pushed: one success less, one failure more) never takes
-- it below 0.
local function add(field, by)
  if tonumber(by) >= 0 then return redis.call('HINCRBY', buckets, field, by) end
  local left = count(field, redis.call('HGET', buckets, field)) + tonumber(by)
  if left < 0 then left = 0 end
  redis.call('HSET', buckets, field, string.format('%d', left))
end

`
const LUA_CLOCK = `-- (1) The server's clock bounds the worker's: a batch far outside it is refused.
local t = redis.call('TIME')
local server = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if math.abs(now - server) > maxSkew then
  return redis.error_reply('FLEETCLOCK ' .. string.format('%d', now - server) .. ' ' .. ARGV[13])
end

`
const LUA_WORKERS = `-- The worker's last batch and time noted (in workers, and in q<worker> of the
-- buckets: what exactly-once rests on if workers is evicted); workers silent past
-- the ttl dropped; liveWorkers: those seen within \`active\` ms.
redis.call('HSET', workers, worker, seen)
local all = redis.call('HGETALL', workers)
local liveWorkers = 0
for i = 1, #all, 2 do
  local at = tonumber(string.match(all[i + 1], ':(-?%d+)$'))
  if at <= now - ttl then
    redis.call('HDEL', workers, all[i])
    redis.call('HDEL', buckets, 'q' .. all[i])
  elseif at > now - active then
    liveWorkers = liveWorkers + 1
  end
end
`
// Inside \`if epoch then\`: an evicted workers hash rebuilt from the q<worker>
// fields of the buckets (both stores keep them there for this).
const LUA_REBUILD_WORKERS = `  if not hasWorkers then
    table.insert(repaired, workers)
    local all = redis.call('HGETALL', buckets)
    for i = 1, #all, 2 do
      local id = string.match(all[i], '^q(.+)$')
      if id then redis.call('HSET', workers, id, all[i + 1]) end
    end
  end
`
const LUA_SLO = `-- (2) One SLO per key (a key written by an older version has only its width).
local meta = redis.call('HMGET', buckets, 'width', 'epoch', 'version', 'low', 'objective', 'n')
if meta[5] and meta[5] ~= slo then
  return redis.error_reply('FLEETSLO ' .. meta[5] .. ' ' .. slo)
elseif not meta[5] and meta[1] and tonumber(meta[1]) ~= width then
  return redis.error_reply('FLEETSLO {"bucketMs":' .. meta[1] .. '} ' .. slo)
end

`
const SCRIPT = `
local buckets, changes, workers = KEYS[1], KEYS[2], KEYS[3]
local worker, seq, width = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local oldest, ttl, now, active = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local slo, windowMs, maxSkew = ARGV[11], tonumber(ARGV[12]), tonumber(ARGV[13])
local FIRST = ${FIRST}
${LUA_COUNT}${LUA_CLOCK}${LUA_SLO}-- (3) The three keys live and die together; an eviction policy may take one
-- alone. Workers gone: rebuilt from the q fields. Changes gone: rebuilt from
-- the buckets. Buckets gone: their counts are lost; a new epoch makes every
-- worker re-read, and the batch numbers (in workers) still count each batch once.
local hasWorkers = redis.call('EXISTS', workers) == 1
local hasChanges = redis.call('EXISTS', changes) == 1
local repaired = {}
local epoch, version = meta[2], tonumber(meta[3] or '0')
if epoch then
${LUA_REBUILD_WORKERS}  if not hasChanges and tonumber(meta[6] or '0') > 0 then
    table.insert(repaired, changes)
    for _, field in ipairs(redis.call('HKEYS', buckets)) do
      local k = string.match(field, '^[sf](-?%d+)$')
      if k then redis.call('ZADD', changes, version, k) end
    end
  end
elseif hasWorkers or hasChanges then
  table.insert(repaired, buckets)
  redis.call('DEL', changes)
end
if not epoch then
  epoch = t[1] .. '.' .. t[2]
end

-- (4) Buckets more than one bucket older than the oldest live one go (the
-- margin keeps a bucket that a worker whose clock is behind ours still
-- counts), at most a window's worth per call, and never one that is live for
-- the server's clock plus the skew allowed: a clock far ahead cannot expire
-- the fleet's window.
local span = 2 * math.ceil(ttl / width)
local bound = math.floor((server + maxSkew - windowMs) / width) + 1
local upto = math.min(oldest, bound) - 2
local low = tonumber(meta[4] or (upto + 1))
if upto - low > span then low = upto - span end
local floor = low
if upto >= low then floor = upto + 1 end

-- (5) Exactly once: a batch is applied only if its seq is new for this worker.
local last = redis.call('HGET', buckets, 'q' .. worker) or redis.call('HGET', workers, worker)
local lastSeq = '0'
if last then lastSeq = string.match(last, '^(%d+)') end
local applied = 0
if seq > tonumber(lastSeq) then
  -- Checked before anything is written: a bucket the worker still counts and
  -- the store has expired (its clock is behind), a count that would be corrupt.
  for i = FIRST, #ARGV, 3 do
    local k = tonumber(ARGV[i])
    if k >= oldest and k < floor then
      return redis.error_reply('FLEETBEHIND ' .. ARGV[i] .. ' ' .. floor .. ' ' .. string.format('%d', now - server))
    end
    if k >= oldest then
      local v = redis.call('HMGET', buckets, 's' .. ARGV[i], 'f' .. ARGV[i])
      -- (A sum past 2^53 - 1 is refused with the stored count, as a corrupt one.)
      if count('s' .. ARGV[i], v[1]) + tonumber(ARGV[i + 1]) > MAX then corrupt('s' .. ARGV[i], v[1]) end
      if count('f' .. ARGV[i], v[2]) + tonumber(ARGV[i + 2]) > MAX then corrupt('f' .. ARGV[i], v[2]) end
    end
  end
end
for k = low, upto do
  redis.call('HDEL', buckets, 's' .. k, 'f' .. k)
  redis.call('ZREM', changes, k)
end
low = floor
if seq > tonumber(lastSeq) then
  applied = 1
  lastSeq = ARGV[2]
  -- An empty batch changes nothing: no new version for the others to read.
  if #ARGV >= FIRST then version = version + 1 end
  for i = FIRST, #ARGV, 3 do
    local k = tonumber(ARGV[i])
    if k >= oldest then
      if ARGV[i + 1] ~= '0' then add('s' .. ARGV[i], ARGV[i + 1]) end
      if ARGV[i + 2] ~= '0' then add('f' .. ARGV[i], ARGV[i + 2]) end
      redis.call('ZADD', changes, version, ARGV[i])
    end
  end
end
local seen = lastSeq .. ':' .. ARGV[6]
redis.call('HSETNX', buckets, 'config', ARGV[8])
redis.call('HSET', buckets, 'width', ARGV[3], 'objective', slo, 'epoch', epoch, 'version', version, 'low', low, 'q' .. worker, seen)
${LUA_WORKERS}redis.call('HSET', buckets, 'n', redis.call('ZCARD', changes))
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ttl) end

-- (6) The buckets changed since the version the worker saw (all of them for a new epoch).
local complete = ARGV[9] ~= epoch or tonumber(ARGV[10]) > version
local ks
if complete then ks = redis.call('ZRANGE', changes, 0, -1) else ks = redis.call('ZRANGEBYSCORE', changes, '(' .. ARGV[10], '+inf') end
local out = {applied, liveWorkers, epoch, version, complete and 1 or 0, table.concat(repaired, ' ')}
for _, k in ipairs(ks) do
  local v = redis.call('HMGET', buckets, 's' .. k, 'f' .. k)
  table.insert(out, k)
  table.insert(out, string.format('%d', count('s' .. k, v[1])))
  table.insert(out, string.format('%d', count('f' .. k, v[2])))
end
return out
`
const SHA = crypto.createHash('sha1').update(SCRIPT).digest('hex')

/** The Redis keys of fleet budget `key`: one hash slot through the `{key}` hash tag. */
function keysOf(key) {
  return [`captcha-budget:{${key}}:buckets`, `captcha-budget:{${key}}:changes`, `captcha-budget:{${key}}:workers`]
}

/**
 * Which client `redis` is: 'ioredis' (Redis or Cluster: `call`), 'node-redis'
 * (a v5+ client: `sendCommand(args)`), or null.
 */
function clientKind(redis) {
  if (redis === null || typeof redis !== 'object') return null
  if (typeof redis.call === 'function') return 'ioredis'
  if (typeof redis.sendCommand === 'function' && 'isOpen' in redis) return 'node-redis'
  return null
}

/** Sends one command (an array of strings) through either client. */
function send(redis, kind, args) {
  return kind === 'ioredis' ? redis.call(...args) : redis.sendCommand(args)
}

/**
 * Runs the sync script: EVALSHA, and EVAL only when the server does not have
 * it cached yet (first use, or after a restart).
 * @returns {Promise<Array<number | string>>} the script's reply
 */
async function runScript(redis, kind, keys, args) {
  const tail = [String(keys.length), ...keys, ...args]
  let reply
  try {
    reply = await send(redis, kind, ['EVALSHA', SHA, ...tail])
  } catch (err) {
    if (!/NOSCRIPT/.test(String(err?.message))) throw err
    reply = await send(redis, kind, ['EVAL', SCRIPT, ...tail])
  }
  return reply
}

/** A value read from Redis, quoted in a message: at most 40 characters of it. */
function excerpt(value) {
  const text = String(value)
  return text.length > 40 ? `${text.slice(0, 40)}…` : text
}

module.exports = { excerpt, SCRIPT, SHA, FIRST, LUA_COUNT, LUA_CLOCK, LUA_SLO, LUA_WORKERS, LUA_REBUILD_WORKERS, keysOf, clientKind, runScript }

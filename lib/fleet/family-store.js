'use strict'
// The Redis side of a BudgetFamily fleet: every child's buckets under one key,
// one Lua script and one round trip per sync for the whole family, whatever
// the number of children. The single-tracker store (store.js) is its model;
// its client handling (clientKind, send) is reused as it is.
//
// Keys of family `key` (one hash slot: the `{key}` hash tag, for Redis Cluster):
//   captcha-budget:{key}:family-buckets  hash: s<K>\n<child> / f<K>\n<child> =
//                                        successes / failures of fleet bucket K of
//                                        the child <child> (its labels as JSON, in
//                                        labelNames order); width, objective
//                                        (the SLO every worker must share), config,
//                                        epoch, version as in store.js
//   captcha-budget:{key}:family-changes  sorted set: K\n<child> scored by the version that last changed it
//   captcha-budget:{key}:family-index    sorted set: K\n<child> scored by K (what expires when)
//   captcha-budget:{key}:family-workers  hash: worker id = "<last applied seq>:<seen at ms>"
// A sync returns the buckets changed since the version its worker last saw:
// every bucket of a child first counted since then is among them, so a child
// that another worker created arrives whole.
const crypto = require('node:crypto')
const { clientKind, LUA_COUNT, LUA_CLOCK, LUA_SLO } = require('./store.js')

// ARGV: 1 worker id, 2 seq, 3 bucket width, 4 oldest live bucket K, 5 ttl ms,
// 6 now ms, 7 "active" ms, 8 config JSON, 9 the epoch and 10 the version the
// worker last saw, 11 the SLO JSON, 12 windowMs, 13 the clock skew allowed (ms),
// then child / K / successes / failures quadruples from 14 on.
// Reply: { applied, active workers, epoch, version, complete, child, K, s, f, … }.
// The steps of store.js's script, its own pieces where they fit (LUA_COUNT,
// LUA_CLOCK, LUA_SLO): (1) the worker's clock against the server's TIME, (2)
// the worker's SLO (targetRate, windowMs, bucketMs) against the key's, (3)
// expiry bounded by the server's time, (4) the batch, checked then applied
// once, (5) the reply, each count checked. A refusal (FLEETCLOCK, FLEETSLO,
// FLEETCORRUPT) is raised before anything is written; family-sync.js turns it
// into a FleetSyncError. A corrupt count's field is s<K>/<child as hex>.
const FIRST = 14
const SCRIPT = `
local buckets, changes, index, workers = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local worker, seq, width = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local oldest, ttl, now, active = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local slo, windowMs, maxSkew = ARGV[11], tonumber(ARGV[12]), tonumber(ARGV[13])
local FIRST = ${FIRST}
${LUA_COUNT}${LUA_CLOCK}${LUA_SLO}
local function field(side, member)
  local k, child = string.match(member, '^(-?%d+)\\n(.*)$')
  return side .. k .. '/' .. string.gsub(child, '.', function(c) return string.format('%02x', string.byte(c)) end)
end

local epoch, version = meta[2], tonumber(meta[3] or '0')
if not epoch then
  epoch = t[1] .. '.' .. t[2]
end
-- (3) Buckets more than one bucket older than the oldest live one go (as in
-- store.js), never one live for the server's clock plus the skew allowed.
local bound = math.floor((server + maxSkew - windowMs) / width) + 1
local upto = math.min(oldest, bound) - 2
local last = redis.call('HGET', workers, worker)
local lastSeq = '0'
if last then lastSeq = string.match(last, '^(%d+)') end
-- (4) Exactly once: a batch is applied only if its seq is new for this worker;
-- a sum past 2^53 - 1 (or a corrupt stored count) is refused before any write.
if seq > tonumber(lastSeq) then
  for i = FIRST, #ARGV, 4 do
    if tonumber(ARGV[i + 1]) >= oldest then
      local member = ARGV[i + 1] .. '\\n' .. ARGV[i]
      local v = redis.call('HMGET', buckets, 's' .. member, 'f' .. member)
      if count(field('s', member), v[1]) + tonumber(ARGV[i + 2]) > MAX then corrupt(field('s', member), v[1]) end
      if count(field('f', member), v[2]) + tonumber(ARGV[i + 3]) > MAX then corrupt(field('f', member), v[2]) end
    end
  end
end
local gone = redis.call('ZRANGEBYSCORE', index, '-inf', upto)
for _, member in ipairs(gone) do
  local k, child = string.match(member, '^(-?%d+)\\n(.*)$')
  redis.call('HDEL', buckets, 's' .. k .. '\\n' .. child, 'f' .. k .. '\\n' .. child)
  redis.call('ZREM', changes, member)
end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', index, '-inf', upto) end
local applied = 0
if seq > tonumber(lastSeq) then
  applied = 1
  lastSeq = ARGV[2]
  if #ARGV >= FIRST then version = version + 1 end
  for i = FIRST, #ARGV, 4 do
    local child, k = ARGV[i], tonumber(ARGV[i + 1])
    if k >= oldest then
      local member = ARGV[i + 1] .. '\\n' .. child
      if ARGV[i + 2] ~= '0' then add('s' .. member, ARGV[i + 2]) end
      if ARGV[i + 3] ~= '0' then add('f' .. member, ARGV[i + 3]) end
      redis.call('ZADD', changes, version, member)
      redis.call('ZADD', index, k, member)
    end
  end
end
redis.call('HSET', buckets, 'width', ARGV[3], 'objective', slo, 'config', ARGV[8], 'epoch', epoch, 'version', version)
redis.call('HSET', workers, worker, lastSeq .. ':' .. ARGV[6])
local seen = redis.call('HGETALL', workers)
local live = 0
for i = 1, #seen, 2 do
  local at = tonumber(string.match(seen[i + 1], ':(-?%d+)$'))
  if at <= now - ttl then redis.call('HDEL', workers, seen[i]) elseif at > now - active then live = live + 1 end
end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ttl) end
-- (5) The buckets changed since the version the worker saw (all of them for a new epoch).
local complete = ARGV[9] ~= epoch or tonumber(ARGV[10]) > version
local members
if complete then members = redis.call('ZRANGE', changes, 0, -1) else members = redis.call('ZRANGEBYSCORE', changes, '(' .. ARGV[10], '+inf') end
local out = {applied, live, epoch, version, complete and 1 or 0}
for _, member in ipairs(members) do
  local k, child = string.match(member, '^(-?%d+)\\n(.*)$')
  local v = redis.call('HMGET', buckets, 's' .. member, 'f' .. member)
  table.insert(out, child)
  table.insert(out, k)
  table.insert(out, string.format('%d', count(field('s', member), v[1])))
  table.insert(out, string.format('%d', count(field('f', member), v[2])))
end
return out
`
const SHA = crypto.createHash('sha1').update(SCRIPT).digest('hex')

/** The Redis keys of family fleet `key`: one hash slot through the `{key}` hash tag. */
function familyKeysOf(key) {
  return ['buckets', 'changes', 'index', 'workers'].map((part) => `captcha-budget:{${key}}:family-${part}`)
}

function send(redis, kind, args) {
  return kind === 'ioredis' ? redis.call(...args) : redis.sendCommand(args)
}

/** Runs the family script: EVALSHA, EVAL when the server does not have it cached. */
async function runFamilyScript(redis, kind, keys, args) {
  const tail = [String(keys.length), ...keys, ...args]
  try {
    return await send(redis, kind, ['EVALSHA', SHA, ...tail])
  } catch (err) {
    if (!/NOSCRIPT/.test(String(err?.message))) throw err
    return send(redis, kind, ['EVAL', SCRIPT, ...tail])
  }
}

module.exports = { SCRIPT, SHA, FIRST, familyKeysOf, runFamilyScript, clientKind }

'use strict'
// The Redis side of a BudgetFamily fleet: every child's buckets under one key,
// one Lua script and one round trip per sync for the whole family, whatever
// the number of children (more for a large batch or reply: chunks of at most
// 1 000 counts, replies of at most READ_PAGE buckets, family-sync.js). The
// single-tracker store (store.js) is its model;
// its client handling (clientKind, send) is reused as it is.
//
// Keys of family `key` (one hash slot: the `{key}` hash tag, for Redis Cluster):
//   captcha-budget:{key}:family-buckets  hash: s<K>\n<child> / f<K>\n<child> =
//                                        successes / failures of fleet bucket K of
//                                        the child <child> (its labels as JSON, in
//                                        labelNames order); width, objective
//                                        (the SLO every worker must share), config,
//                                        epoch, version as in store.js (a version
//                                        changes at most 1 000 buckets)
//   captcha-budget:{key}:family-changes  sorted set: K\n<child> scored by the version that last changed it
//   captcha-budget:{key}:family-index    sorted set: K\n<child> scored by K (what expires when)
//   captcha-budget:{key}:family-workers  hash: worker id = "<last applied seq>:<seen at ms>"
//                                        (copied to q<worker id> in family-buckets, as in
//                                        store.js: what exactly-once rests on if evicted)
// The buckets hash also holds n (members of family-changes after the last sync).
// A sync returns the buckets changed since the version its worker last saw:
// every bucket of a child first counted since then is among them, so a child
// that another worker created arrives whole.
const crypto = require('node:crypto')
const { labelText: labelsAsText } = require('../util/label-text.js')
const { clientKind, excerpt, LUA_COUNT, LUA_CLOCK, LUA_SLO, LUA_WORKERS, LUA_REBUILD_WORKERS } = require('./store.js')

// ARGV: 1 worker id, 2 seq, 3 bucket width, 4 oldest live bucket K, 5 ttl ms,
// 6 now ms, 7 "active" ms, 8 config JSON, 9 the epoch and 10 the version the
// worker last saw, 11 the SLO JSON, 12 windowMs, 13 the clock skew allowed (ms),
// 14 '1' to get the buckets changed back ('0': a push-only chunk of a larger
// batch, family-sync.js), 15 the label names (JSON, as the config's first key),
// then child / K / successes / failures quadruples from 16 on.
// Reply: { applied, active workers, epoch, version (the reply has every change
// up to it), complete, repaired (the names of the keys found missing,
// space-separated, or ''), more (1: changes after that version are left for
// the next call), then "K\n<child>", s, f triples (each count checked, as
// stored) }.
// The steps of store.js's script, its own pieces where they fit (LUA_COUNT,
// LUA_CLOCK, LUA_SLO): (1) the worker's clock against the server's TIME, (2)
// the worker's SLO (targetRate, windowMs, bucketMs, and the label names)
// against the key's, (3) a partial key set (an eviction) repaired, (4) expiry
// bounded by the server's time, (5) the batch, checked then applied once, (6)
// the reply, each count checked. A refusal (FLEETCLOCK, FLEETSLO,
// FLEETCORRUPT) is raised before anything is written; family-sync.js turns it
// into a FleetSyncError. A corrupt count's field is s<K>/<child as hex>, built
// only then: the per-bucket work is a few Redis calls, batched, whatever the
// labels' length.
const FIRST = 16
/** The most buckets one reply holds (whole versions): a joining worker reads a large window in several calls. */
const READ_PAGE = 5000
const SCRIPT = `
local buckets, changes, index, workers = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local worker, seq, width = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local oldest, ttl, now, active = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local slo, windowMs, maxSkew = ARGV[11], tonumber(ARGV[12]), tonumber(ARGV[13])
local wantBuckets, labelNames = ARGV[14] == '1', ARGV[15]
local FIRST = ${FIRST}
-- Redis commands take at most this many members per call here (Lua's unpack has a bound).
local GROUP = 1000
-- A reply holds at most this many buckets (whole versions), the rest in later calls.
local PAGE = ${READ_PAGE}
${LUA_COUNT}${LUA_CLOCK}${LUA_SLO}-- (2) ... and the label names: a child's id is its label values in their order.
local config = redis.call('HGET', buckets, 'config')
if config then
  local theirs = string.match(config, '^{"labelNames":(%b[])') or 'null'
  if theirs ~= labelNames then
    local function with(json, names) return string.sub(json, 1, -2) .. ',"labelNames":' .. names .. '}' end
    return redis.error_reply('FLEETSLO ' .. with(meta[5] or slo, theirs) .. ' ' .. with(slo, labelNames))
  end
end

local function field(side, member)
  local k, child = string.match(member, '^(-?%d+)\\n(.*)$')
  return side .. k .. '/' .. string.gsub(child, '.', function(c) return string.format('%02x', string.byte(c)) end)
end
-- A stored count of member's side: count() of LUA_COUNT, its field named only for a refusal.
local function stored(side, member, v)
  if v == false or v == nil then return 0 end
  local n = tonumber(v)
  if not string.match(v, '^%d+$') or not n or n > MAX then corrupt(field(side, member), v) end
  return n
end
-- The s and f fields of each member, { s1, f1, s2, f2, … }, and their values, read
-- with one HMGET per GROUP members. (Counters, not #t: this is the per-count work.)
local function countsOf(members)
  local names, values, n = {}, {}, 0
  for j = 1, #members do
    names[2 * j - 1] = 's' .. members[j]
    names[2 * j] = 'f' .. members[j]
  end
  for from = 1, #names, 2 * GROUP do
    local v = redis.call('HMGET', buckets, unpack(names, from, math.min(from + 2 * GROUP - 1, #names)))
    for j = 1, #v do
      n = n + 1
      values[n] = v[j]
    end
  end
  return names, values
end
-- A command with a fixed head and many arguments, GROUP at a time (args: a flat list; step: arguments per item).
local function many(command, key, args, step)
  for from = 1, #args, GROUP * step do
    redis.call(command, key, unpack(args, from, math.min(from + GROUP * step - 1, #args)))
  end
end

-- (3) The four keys live and die together; an eviction policy may take one
-- alone. Workers gone: rebuilt from the q fields. Changes or index gone:
-- rebuilt from the buckets. Buckets gone: their counts are lost; a new epoch
-- makes every worker re-read, and the batch numbers (in workers) still count
-- each batch once.
local hasWorkers = redis.call('EXISTS', workers) == 1
local hasChanges = redis.call('EXISTS', changes) == 1
local hasIndex = redis.call('EXISTS', index) == 1
local repaired = {}
local epoch, version = meta[2], tonumber(meta[3] or '0')
if epoch then
${LUA_REBUILD_WORKERS}  local held = tonumber(meta[6] or '0') > 0
  local lostChanges, lostIndex = held and not hasChanges, held and not hasIndex
  if lostChanges then table.insert(repaired, changes) end
  if lostIndex then table.insert(repaired, index) end
  if lostChanges or lostIndex then
    local byVersion, byK, seen, count = {}, {}, {}, 0
    for _, f in ipairs(redis.call('HKEYS', buckets)) do
      local k, child = string.match(f, '^[sf](-?%d+)\\n(.*)$')
      if k then
        local member = k .. '\\n' .. child
        if not seen[member] then
          seen[member] = true
          -- New versions, GROUP members each (as a push's): every worker re-reads
          -- them, a page at a time.
          byVersion[2 * count + 1] = version + 1 + math.floor(count / GROUP)
          byVersion[2 * count + 2] = member
          byK[2 * count + 1] = k
          byK[2 * count + 2] = member
          count = count + 1
        end
      end
    end
    if lostChanges then
      many('ZADD', changes, byVersion, 2)
      version = version + math.ceil(count / GROUP)
    end
    if lostIndex then many('ZADD', index, byK, 2) end
  end
elseif hasWorkers or hasChanges or hasIndex then
  table.insert(repaired, buckets)
  redis.call('DEL', changes, index)
end
if not epoch then
  epoch = t[1] .. '.' .. t[2]
end

-- (4) Buckets more than one bucket older than the oldest live one go (as in
-- store.js), never one live for the server's clock plus the skew allowed.
local bound = math.floor((server + maxSkew - windowMs) / width) + 1
local upto = math.min(oldest, bound) - 2
local last = redis.call('HGET', buckets, 'q' .. worker) or redis.call('HGET', workers, worker)
local lastSeq = '0'
if last then lastSeq = string.match(last, '^(%d+)') end
-- (5) Exactly once: a batch is applied only if its seq is new for this worker;
-- a sum past 2^53 - 1 (or a corrupt stored count) is refused before any write.
-- The new counts are worked out here from the stored ones (read in one HMGET)
-- and written with one HSET: a Redis call per count would cost more than the rest.
local live, members, sums, changed, nLive, nChanged = {}, {}, {}, {}, 0, 0
-- The members not in the buckets hash yet: the only ones the index (scored by K, which never changes) lacks.
local fresh = {}
if seq > tonumber(lastSeq) then
  for i = FIRST, #ARGV, 4 do
    if tonumber(ARGV[i + 1]) >= oldest then
      nLive = nLive + 1
      live[nLive] = i
      members[nLive] = ARGV[i + 1] .. '\\n' .. ARGV[i]
    end
  end
  local names, v = countsOf(members)
  for j = 1, nLive do
    local i = live[j]
    fresh[j] = not v[2 * j - 1] and not v[2 * j]
    for side = 0, 1 do
      local add = ARGV[i + 2 + side]
      if add ~= '0' then
        local at = 2 * j - 1 + side
        local f = names[at]
        local was = sums[f]
        if was == nil then
          was = stored(side == 0 and 's' or 'f', members[j], v[at])
          nChanged = nChanged + 1
          changed[nChanged] = f
        end
        -- A negative change (a success rejected after it was pushed: one success
        -- less, one failure more) never takes a count below 0.
        local sum = math.max(0, was + tonumber(add))
        if sum > MAX then corrupt(field(side == 0 and 's' or 'f', members[j]), v[at] or '0') end
        sums[f] = sum
      end
    end
  end
end
local gone = redis.call('ZRANGEBYSCORE', index, '-inf', upto)
if #gone > 0 then
  local fields = {}
  for _, member in ipairs(gone) do
    fields[#fields + 1] = 's' .. member
    fields[#fields + 1] = 'f' .. member
  end
  many('HDEL', buckets, fields, 2)
  many('ZREM', changes, gone, 1)
  redis.call('ZREMRANGEBYSCORE', index, '-inf', upto)
end
local applied = 0
if seq > tonumber(lastSeq) then
  applied = 1
  lastSeq = ARGV[2]
  if #ARGV >= FIRST then version = version + 1 end
  local writes = {}
  for j = 1, nChanged do
    local f = changed[j]
    writes[2 * j - 1] = f
    writes[2 * j] = string.format('%d', sums[f])
  end
  many('HSET', buckets, writes, 2)
  local byVersion, byK, nNew = {}, {}, 0
  for j = 1, nLive do
    local member = members[j]
    byVersion[2 * j - 1] = version
    byVersion[2 * j] = member
    if fresh[j] then
      byK[2 * nNew + 1] = ARGV[live[j] + 1]
      byK[2 * nNew + 2] = member
      nNew = nNew + 1
    end
  end
  many('ZADD', changes, byVersion, 2)
  many('ZADD', index, byK, 2)
end
local seen = lastSeq .. ':' .. ARGV[6]
redis.call('HSET', buckets, 'width', ARGV[3], 'objective', slo, 'config', ARGV[8], 'epoch', epoch, 'version', version, 'q' .. worker, seen)
${LUA_WORKERS}redis.call('HSET', buckets, 'n', redis.call('ZCARD', changes))
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ttl) end
-- (6) The buckets changed since the version the worker saw (all of them for a new
-- epoch), unless this is a push-only chunk: at most PAGE of them, whole
-- versions (a version holds at most GROUP members, but one an older script
-- wrote), and the version the reply is complete up to. A reply with more = 1
-- is followed by a call without a batch from that version (family-sync.js).
local complete = ARGV[9] ~= epoch or tonumber(ARGV[10]) > version
local out = {applied, liveWorkers, epoch, version, complete and 1 or 0, table.concat(repaired, ' '), 0}
if not wantBuckets then
  out[5] = 0
  return out
end
local from = '-inf'
if not complete then from = '(' .. ARGV[10] end
local page = redis.call('ZRANGEBYSCORE', changes, from, '+inf', 'WITHSCORES', 'LIMIT', 0, PAGE + 1)
local since = {}
if #page <= 2 * PAGE then
  for j = 1, #page, 2 do since[#since + 1] = page[j] end
else
  -- Past PAGE: the versions before the first one left out, whole; or, when the
  -- page holds one version only, that version whole.
  local cut = tonumber(page[2 * PAGE + 2])
  local upto = cut - 1
  if tonumber(page[2]) == cut then
    page = redis.call('ZRANGEBYSCORE', changes, cut, cut)
    upto = cut
    for j = 1, #page do since[j] = page[j] end
  else
    for j = 1, 2 * PAGE, 2 do
      if tonumber(page[j + 1]) < cut then since[#since + 1] = page[j] end
    end
  end
  if redis.call('ZCOUNT', changes, '(' .. upto, '+inf') > 0 then
    out[4] = upto
    out[7] = 1
  end
end
local _, v = countsOf(since)
local n = #out
for j = 1, #since do
  local member = since[j]
  stored('s', member, v[2 * j - 1])
  stored('f', member, v[2 * j])
  out[n + 1] = member
  out[n + 2] = v[2 * j - 1] or '0'
  out[n + 3] = v[2 * j] or '0'
  n = n + 3
end
return out
`
const SHA = crypto.createHash('sha1').update(SCRIPT).digest('hex')

// What the sync (family-sync.js) and the gate (family-gate.js) say of what they read.
/** A child's labels (its id: JSON in labelNames order) as people read them and --labels takes them: type=x,site=y, escaped. */
function labelText(id) {
  try {
    return labelsAsText(JSON.parse(id))
  } catch {
    return excerpt(id)
  }
}

/** Why a child's stored count (side 's' or 'f' of bucket `index`) is refused: the sync's and the gate's words. */
function corruptCountText(side, index, id, value) {
  const what = side === 's' ? 'successes' : 'failures'
  return `Redis holds ${excerpt(value)} for bucket ${index}'s ${what} of the child ${labelText(id)}: not a whole number from 0 to 2^53 − 1 (${Number.MAX_SAFE_INTEGER}); the key is corrupt`
}

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

module.exports = { SCRIPT, SHA, FIRST, READ_PAGE, labelText, corruptCountText, excerpt, familyKeysOf, runFamilyScript, clientKind }

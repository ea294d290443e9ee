'use strict'
// The Redis side of a fleet budget: one Lua script, run in one round trip per
// sync, through whichever client the caller gave (ioredis or node-redis v5+).
//
// Keys of budget `key` (one hash slot: the `{key}` hash tag, for Redis Cluster):
//   captcha-budget:{key}:buckets  hash: s<K> / f<K> = successes / failures of
//                                 fleet bucket K; width = the bucket width (ms);
//                                 config = the SLO config JSON (for the gate);
//                                 epoch (set when the hash is created), version
//                                 (bumped by every batch), low (buckets below
//                                 are gone)
//   captcha-budget:{key}:changes  sorted set: K scored by the version that last changed it
//   captcha-budget:{key}:workers  hash: worker id = "<last applied seq>:<seen at ms>"
// All expire a window (plus two buckets) after the last sync. A sync returns
// only the buckets changed since the version its worker last saw (all of
// them on its first sync, or when the hash was re-created): a few buckets, not
// the window, in the steady state.
const crypto = require('node:crypto')

// ARGV: 1 worker id, 2 seq, 3 bucket width, 4 oldest live bucket K, 5 ttl ms,
// 6 now ms, 7 "active" ms, 8 config JSON, 9 the epoch and 10 the version the
// worker last saw, then K / successes / failures triples.
// Reply: { applied (1, or 0 for a seq already applied), active workers, epoch,
// version, complete (1: every bucket, 0: the changed ones), K, s, f, … }.
const SCRIPT = `
local buckets, changes, workers = KEYS[1], KEYS[2], KEYS[3]
local worker, seq, width = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local oldest, ttl, now, active = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local meta = redis.call('HMGET', buckets, 'width', 'epoch', 'version', 'low')
if meta[1] and meta[1] ~= width then
  return redis.error_reply('ERR this key holds fleet buckets of ' .. meta[1] .. ' ms; this tracker uses ' .. width .. ' ms')
end
local epoch, version, low = meta[2], tonumber(meta[3] or '0'), tonumber(meta[4] or (oldest - 1))
if not epoch then
  local t = redis.call('TIME')
  epoch = t[1] .. '.' .. t[2]
end
-- Buckets more than one bucket older than the oldest live one go (the margin
-- keeps a bucket that a worker whose clock is behind ours still counts), at
-- most a window's worth per call.
local upto = oldest - 2
if upto - low > 2 * math.ceil(ttl / tonumber(width)) then low = upto - 2 * math.ceil(ttl / tonumber(width)) end
for k = low, upto do
  redis.call('HDEL', buckets, 's' .. k, 'f' .. k)
  redis.call('ZREM', changes, k)
end
if upto >= low then low = upto + 1 end
local last = redis.call('HGET', workers, worker)
local lastSeq = '0'
if last then lastSeq = string.match(last, '^(%d+)') end
local applied = 0
-- Exactly once: a batch is applied only if its seq is new for this worker.
if seq > tonumber(lastSeq) then
  applied = 1
  lastSeq = ARGV[2]
  -- An empty batch changes nothing: no new version for the others to read.
  if #ARGV >= 11 then version = version + 1 end
  for i = 11, #ARGV, 3 do
    local k = tonumber(ARGV[i])
    if k >= oldest and k >= low then
      if ARGV[i + 1] ~= '0' then redis.call('HINCRBY', buckets, 's' .. ARGV[i], ARGV[i + 1]) end
      if ARGV[i + 2] ~= '0' then redis.call('HINCRBY', buckets, 'f' .. ARGV[i], ARGV[i + 2]) end
      redis.call('ZADD', changes, version, ARGV[i])
    end
  end
end
redis.call('HSET', buckets, 'width', width, 'config', ARGV[8], 'epoch', epoch, 'version', version, 'low', low)
redis.call('HSET', workers, worker, lastSeq .. ':' .. ARGV[6])
local seen = redis.call('HGETALL', workers)
local live = 0
for i = 1, #seen, 2 do
  local at = tonumber(string.match(seen[i + 1], ':(-?%d+)$'))
  if at <= now - ttl then redis.call('HDEL', workers, seen[i]) elseif at > now - active then live = live + 1 end
end
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ttl) end
local complete = ARGV[9] ~= epoch or tonumber(ARGV[10]) > version
local ks
if complete then ks = redis.call('ZRANGE', changes, 0, -1) else ks = redis.call('ZRANGEBYSCORE', changes, '(' .. ARGV[10], '+inf') end
local out = {applied, live, epoch, version, complete and 1 or 0}
for _, k in ipairs(ks) do
  local v = redis.call('HMGET', buckets, 's' .. k, 'f' .. k)
  table.insert(out, k)
  table.insert(out, v[1] or '0')
  table.insert(out, v[2] or '0')
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

module.exports = { SCRIPT, SHA, keysOf, clientKind, runScript }

'use strict'
// The Redis side of a fleet budget: one Lua script, run in one round trip per
// sync, through whichever client the caller gave (ioredis or node-redis v5+).
//
// Keys of budget `key` (one hash slot: the `{key}` hash tag, for Redis Cluster):
//   captcha-budget:{key}:buckets  hash: s<K> / f<K> = successes / failures of
//                                 fleet bucket K; width = the bucket width (ms);
//                                 config = the SLO config JSON (for the gate)
//   captcha-budget:{key}:workers  hash: worker id = "<last applied seq>:<seen at ms>"
// Both expire a window (plus two buckets) after the last sync.
const crypto = require('node:crypto')

// ARGV: 1 worker id, 2 seq, 3 bucket width, 4 oldest live bucket K, 5 ttl ms,
// 6 now ms, 7 "active" ms, 8 config JSON, then K / successes / failures triples.
// Reply: { applied (1, or 0 for a seq already applied), active workers, K, s, f, … }.
const SCRIPT = `
local buckets, workers = KEYS[1], KEYS[2]
local worker, seq, width = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local oldest, ttl, now, active = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local stored = redis.call('HGET', buckets, 'width')
if stored and stored ~= width then
  return redis.error_reply('ERR this key holds fleet buckets of ' .. stored .. ' ms; this tracker uses ' .. width .. ' ms')
end
local last = redis.call('HGET', workers, worker)
local lastSeq = '0'
if last then lastSeq = string.match(last, '^(%d+)') end
local applied = 0
-- Exactly once: a batch is applied only if its seq is new for this worker.
if seq > tonumber(lastSeq) then
  applied = 1
  lastSeq = ARGV[2]
  for i = 9, #ARGV, 3 do
    if tonumber(ARGV[i]) >= oldest then
      if ARGV[i + 1] ~= '0' then redis.call('HINCRBY', buckets, 's' .. ARGV[i], ARGV[i + 1]) end
      if ARGV[i + 2] ~= '0' then redis.call('HINCRBY', buckets, 'f' .. ARGV[i], ARGV[i + 2]) end
    end
  end
end
redis.call('HSET', workers, worker, lastSeq .. ':' .. ARGV[6])
redis.call('HSET', buckets, 'width', width, 'config', ARGV[8])
-- Buckets a bucket older than the oldest live one go: the margin keeps a
-- bucket that a worker whose clock is behind ours still counts.
local counts, order = {}, {}
local fields = redis.call('HGETALL', buckets)
for i = 1, #fields, 2 do
  local kind = string.sub(fields[i], 1, 1)
  if kind == 's' or kind == 'f' then
    local k = tonumber(string.sub(fields[i], 2))
    if k < oldest - 1 then
      redis.call('HDEL', buckets, fields[i])
    else
      if not counts[k] then counts[k] = {0, 0}; table.insert(order, k) end
      if kind == 's' then counts[k][1] = tonumber(fields[i + 1]) else counts[k][2] = tonumber(fields[i + 1]) end
    end
  end
end
local seen = redis.call('HGETALL', workers)
local live = 0
for i = 1, #seen, 2 do
  local at = tonumber(string.match(seen[i + 1], ':(-?%d+)$'))
  if at <= now - ttl then redis.call('HDEL', workers, seen[i]) elseif at > now - active then live = live + 1 end
end
redis.call('PEXPIRE', buckets, ttl)
redis.call('PEXPIRE', workers, ttl)
local out = {applied, live}
for _, k in ipairs(order) do
  table.insert(out, k); table.insert(out, counts[k][1]); table.insert(out, counts[k][2])
end
return out
`
const SHA = crypto.createHash('sha1').update(SCRIPT).digest('hex')

/** The Redis keys of fleet budget `key`: one hash slot through the `{key}` hash tag. */
function keysOf(key) {
  return [`captcha-budget:{${key}}:buckets`, `captcha-budget:{${key}}:workers`]
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
 * @returns {Promise<number[]>} the script's reply as numbers
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
  return reply.map(Number)
}

module.exports = { SCRIPT, SHA, keysOf, clientKind, runScript }

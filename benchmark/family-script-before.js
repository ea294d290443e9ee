'use strict'
// The family fleet's Lua script as it was before issue 30 (item 5): it
// hex-encoded a child's labels byte by byte for every count it read, whether
// the count was corrupt or not. Kept verbatim as the baseline of
// `npm run bench:fleet` (benchmark/fleet-sync.js), never run by the library.
// ARGV: the 13 arguments of lib/fleet/loop.js, then child / K / successes /
// failures quadruples from 14 on; one call for the whole batch.
const { LUA_COUNT, LUA_CLOCK, LUA_SLO } = require('../lib/fleet/store.js')

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
      if ARGV[i + 2] ~= '0' then redis.call('HINCRBY', buckets, 's' .. member, ARGV[i + 2]) end
      if ARGV[i + 3] ~= '0' then redis.call('HINCRBY', buckets, 'f' .. member, ARGV[i + 3]) end
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

module.exports = { SCRIPT, FIRST }

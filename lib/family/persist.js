'use strict'
// A family's persistence: the `persist` option, the atomic write of its
// snapshot, the autosave timer and exit hook, and the lock file that makes one
// family the owner of a path.
const fs = require('node:fs')
const path = require('node:path')
const errors = require('../errors.js')

const DEFAULT_INTERVAL_MS = 60_000

function checkPersist(persist, where) {
  const { path: file, intervalMs = DEFAULT_INTERVAL_MS, ...rest } = errors.checkOptionsObject(persist, ['path', 'intervalMs'], where)
  if (persist === undefined || Object.keys(rest).length) throw errors.invalidArgType(`${where} must be { path, intervalMs? }`)
  if (typeof file !== 'string' || file === '') throw errors.invalidArgType(`${where}.path must be a non-empty string, got ${errors.describe(file)}`)
  return { path: file, intervalMs: errors.integerOption(intervalMs, `${where}.intervalMs`, 1, 2 ** 31 - 1, DEFAULT_INTERVAL_MS) }
}

function readPersisted(file) {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw Object.assign(new Error(`persist: cannot read ${file}: ${err.message}`), { code: 'ERR_PERSIST_READ', cause: err })
  }
}

function writeAtomically(file, text) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  try {
    const fd = fs.openSync(tmp, 'w')
    try {
      fs.writeFileSync(fd, text)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, file)
  } catch (err) {
    try {
      fs.unlinkSync(tmp)
    } catch {}
    throw Object.assign(new Error(`persist: cannot write ${file}: ${err.message}`), { code: 'ERR_PERSIST_WRITE', cause: err })
  }
}

/**
 * Calls `save()` every `intervalMs` (the timer does not keep the process alive)
 * and at exit, then releases `lockPath`; a failed save is reported on stderr.
 * @returns {() => void} stops both
 */
function startAutosave(save, intervalMs, lockPath) {
  const timer = setInterval(() => {
    try {
      save()
    } catch (err) {
      process.stderr.write(`captcha-error-budget: family autosave failed: ${err.message}\n`)
    }
  }, intervalMs)
  timer.unref()
  const exitHook = () => {
    try {
      save()
    } catch (err) {
      process.stderr.write(`captcha-error-budget: family final save failed: ${err.message}\n`)
    }
    releaseLock(lockPath)
  }
  process.on('exit', exitHook)
  return function stopAutosave() {
    clearInterval(timer)
    process.removeListener('exit', exitHook)
  }
}

// The lock files (`<path>.lock`) the families of this process hold.
const lockedPaths = new Set()

function lockPathOf(file) {
  // Through symlinks, as the tracker's lock: two links to one file share one lock.
  let target
  try {
    target = fs.realpathSync(file)
  } catch {
    try {
      target = path.join(fs.realpathSync(path.dirname(path.resolve(file))), path.basename(file))
    } catch {
      target = path.resolve(file)
    }
  }
  return `${target}.lock`
}

function lockOwner(lockPath) {
  try {
    const pid = Number(fs.readFileSync(lockPath, 'utf8').trim())
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

function isRunning(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code !== 'ESRCH' // EPERM: it runs, as another user
  }
}

function lockedError(file, lockPath, owner) {
  const err = new Error(
    `persist: ${file}: is in use by ${owner} (lock ${lockPath}): one family owns a persist path; close() the other first, or give each family its own path`,
  )
  err.code = 'ERR_PERSIST_LOCKED'
  return err
}

/**
 * Takes `<path>.lock` (created with 'wx', holding this process's pid), or throws
 * ERR_PERSIST_LOCKED naming its owner. A lock of a pid that no longer runs is
 * taken over. Where no lock file can be made (a missing or read-only directory)
 * the path is used unlocked: reading and writing it fail on their own.
 * @returns {string | null} the lock file's path, for releaseLock()
 */
function takeLock(file) {
  const lockPath = lockPathOf(file)
  if (lockedPaths.has(lockPath)) throw lockedError(file, lockPath, 'another family of this process')
  for (let i = 0; i < 16; i++) {
    let fd
    try {
      fd = fs.openSync(lockPath, 'wx')
    } catch (err) {
      if (err.code !== 'EEXIST') return null
      const pid = lockOwner(lockPath)
      if (pid === process.pid) throw lockedError(file, lockPath, 'another tracker of this process')
      if (pid !== null && isRunning(pid)) throw lockedError(file, lockPath, `process ${pid}`)
      // Stale (its owner is gone): taken over, unless someone else did so meanwhile.
      if (lockOwner(lockPath) === pid) {
        try {
          fs.unlinkSync(lockPath)
        } catch {}
      }
      continue
    }
    try {
      fs.writeSync(fd, `${process.pid}\n`)
    } finally {
      fs.closeSync(fd)
    }
    lockedPaths.add(lockPath)
    return lockPath
  }
  throw Object.assign(new Error(`persist: cannot lock ${file}: ${lockPath} keeps being replaced`), { code: 'ERR_PERSIST_LOCKED' })
}

function releaseLock(lockPath) {
  if (lockPath === null || !lockedPaths.has(lockPath)) return
  lockedPaths.delete(lockPath)
  try {
    if (lockOwner(lockPath) === process.pid) fs.unlinkSync(lockPath)
  } catch {}
}

module.exports = { checkPersist, readPersisted, writeAtomically, startAutosave, takeLock, releaseLock }

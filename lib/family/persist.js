'use strict'
// A family's persistence: the `persist` option, and the tracker's own persist
// file machinery (the core's persist module, through src/persist_file.rs): one OS lock for
// families and trackers, so the two exclude each other on one path and a dead
// owner's lock dies with it; the read that refuses FIFOs, devices and files
// over 256 MiB; the atomic write through an exclusive temp file. Plus the
// autosave timer and one exit hook for every persisted family of the process.
const errors = require('../util/errors.js')
const { persistFileLock, persistFileRead, persistFileWrite } = require('../native/load-native.js')

const DEFAULT_INTERVAL_MS = 60_000

function checkPersist(persist, where) {
  const { path: file, intervalMs = DEFAULT_INTERVAL_MS, ...rest } = errors.checkOptionsObject(persist, ['path', 'intervalMs'], where)
  if (persist === undefined || Object.keys(rest).length) throw errors.invalidArgType(`${where} must be { path, intervalMs? }`)
  if (typeof file !== 'string' || file === '') throw errors.invalidArgType(`${where}.path must be a non-empty string, got ${errors.describe(file)}`)
  return { path: file, intervalMs: errors.integerOption(intervalMs, `${where}.intervalMs`, 1, 2 ** 31 - 1, DEFAULT_INTERVAL_MS) }
}

/** The persist file's text, or null when there is none (ERR_PERSIST_READ / ERR_PERSIST_WRITE as a tracker's). */
function readPersisted(file) {
  return persistFileRead(file)
}

/** Replaces `file` (or the file it links to) with `text` atomically (ERR_PERSIST_WRITE). */
function writeAtomically(file, text) {
  persistFileWrite(file, text)
}

// The final saves of the persisted families of this process, run by one 'exit' listener
// (one per family made Node warn of a leak at the eleventh).
const finalSaves = new Set()

function saveAll() {
  for (const save of finalSaves) save()
}

/**
 * Calls `save()` every `intervalMs` (the timer does not keep the process alive)
 * and at exit, then releases `lock`; a failed save is reported on stderr.
 * @returns {() => void} stops both
 */
function startAutosave(save, intervalMs, lock) {
  const timer = setInterval(() => {
    try {
      save()
    } catch (err) {
      process.stderr.write(`captcha-error-budget: family autosave failed: ${err.message}\n`)
    }
  }, intervalMs)
  timer.unref()
  const finalSave = () => {
    try {
      save()
    } catch (err) {
      process.stderr.write(`captcha-error-budget: family final save failed: ${err.message}\n`)
    }
    releaseLock(lock)
  }
  if (finalSaves.size === 0) process.on('exit', saveAll)
  finalSaves.add(finalSave)
  return function stopAutosave() {
    clearInterval(timer)
    finalSaves.delete(finalSave)
    if (finalSaves.size === 0) process.removeListener('exit', saveAll)
  }
}

/**
 * Takes the persist lock of `file` for a family, or throws ERR_PERSIST_LOCKED
 * naming its holder (a family or tracker of this process, or another process).
 * @returns {{ release(): void }} for releaseLock()
 */
function takeLock(file) {
  return persistFileLock(file)
}

function releaseLock(lock) {
  lock?.release()
}

module.exports = { checkPersist, readPersisted, writeAtomically, startAutosave, takeLock, releaseLock }

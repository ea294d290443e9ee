'use strict'
// Receiver checks for the native class's methods and getters. The generated
// Node-API glue answers a wrong `this` (`Object.getOwnPropertyDescriptor(
// ErrorBudgetTracker.prototype, 'total').get.call({})`, an unbound method)
// with "Failed to unwrap exclusive reference of `ErrorBudgetTracker` type";
// these wrappers say instead which member needs which receiver, as a
// TypeError with code ERR_INVALID_THIS, before the native code runs.

const { REPORT_INTO } = require('./fast-report.js')

/** The registered symbol under which the prototype keeps its own `record` (src/fast_path.rs). */
const NATIVE_RECORD = Symbol.for('captcha-error-budget.nativeRecord')

/**
 * Whether `value` is a tracker made by the constructor: it defines the report
 * filler on every instance it makes (src/fast_path.rs, `install`).
 * @param {unknown} value
 */
function isTracker(value) {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, REPORT_INTO)
}

/** What a wrong receiver is, for messages. */
function describeReceiver(value) {
  if (value === undefined || value === null) return String(value)
  if (typeof value !== 'object' && typeof value !== 'function') return `a ${typeof value}`
  return `${typeof value === 'function' ? 'a function' : 'an object'} that is not an ErrorBudgetTracker`
}

/**
 * The TypeError for `member` called on `receiver`.
 * @param {string} member e.g. 'report()' or 'the total getter'
 * @param {unknown} receiver
 */
function invalidThis(member, receiver) {
  const method = member.endsWith('()') ? member.slice(0, -2) : null
  const err = new TypeError(
    `${member} needs an ErrorBudgetTracker as this, got ${describeReceiver(receiver)}` +
      (method ? `: call it as tracker.${method}(), or bind it to the tracker` : ''),
  )
  err.code = 'ERR_INVALID_THIS'
  return err
}

/**
 * Wraps every method and getter of `Tracker.prototype` (the native ones, at
 * load time) in a receiver check; keeps names, lengths and attributes.
 * @param {Function} Tracker the native ErrorBudgetTracker class
 */
function installReceiverChecks(Tracker) {
  const proto = Tracker.prototype
  const wrapped = new Map()
  for (const key of Reflect.ownKeys(proto)) {
    if (key === 'constructor' || key === NATIVE_RECORD) continue
    const descriptor = Object.getOwnPropertyDescriptor(proto, key)
    const name = typeof key === 'symbol' ? `[${key.description}]` : key
    if (typeof descriptor.get === 'function') {
      const get = descriptor.get
      const checked = {
        get [name]() {
          if (!isTracker(this)) throw invalidThis(`the ${name} getter`, this)
          return get.call(this)
        },
      }
      descriptor.get = Object.getOwnPropertyDescriptor(checked, name).get
    } else if (typeof descriptor.value === 'function') {
      const method = descriptor.value
      // Symbol.dispose is close() itself: one wrapper for both.
      const checked =
        wrapped.get(method) ??
        {
          [name]() {
            if (!isTracker(this)) throw invalidThis(`${name}()`, this)
            // `arguments` as given: the native side counts them (record(ok) vs record(ok, atMs)).
            return method.apply(this, arguments)
          },
        }[name]
      Object.defineProperty(checked, 'length', { value: method.length })
      wrapped.set(method, checked)
      descriptor.value = checked
    } else {
      continue
    }
    Object.defineProperty(proto, key, descriptor)
  }
  // The constructor tells a subclass that overrides record() by comparing with this.
  if (wrapped.has(proto[NATIVE_RECORD])) {
    Object.defineProperty(proto, NATIVE_RECORD, { value: wrapped.get(proto[NATIVE_RECORD]) })
  }
}

module.exports = { installReceiverChecks, invalidThis, isTracker }

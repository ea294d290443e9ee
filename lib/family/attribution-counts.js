'use strict'
// The window counts family.blame() needs (lib/providers/blame.js), kept per attribution
// label as the children change, so that one blame() costs O(providers), not a
// read of every child (issue 44: 100 ms at 40 000 children, asked per provider
// before each solve by createFailover(family)).
//
// Sums kept, each as { ok, failed } with the other labels summed over: the
// family's total T, each provider's P[q], each (provider, site)'s C[q, s] and
// each site's S[s] = Σ_q C[q, s]. For the child of provider p and site s:
//   provider test  suspect P[p] − C[p, s]   rest (T − S[s]) − (P[p] − C[p, s])
//   site test, each provider q   suspect C[q, s]   rest P[q] − C[q, s]
//
// A child's counts change by every record, verdict, fleet sync or restore,
// whichever way it came (the fast path and its lock-free lease included), and
// on a real clock as its oldest events leave the window. Natively each child
// tells the family's change log (`ChangeLog`, the core's watch.rs) the first
// time its counts change after the family read them; and each read says when
// they change by expiry alone, kept here in a heap. Before answering, blame()
// re-reads only the children logged and those whose expiry came: the sums
// lose each one's old counts and take its new ones.
const { ChangeLog } = require('../native/load-native.js')
const { Heap } = require('./eviction.js')

const zero = () => ({ ok: 0, failed: 0 })

/** `to` += (ok, failed). */
function add(to, ok, failed) {
  to.ok += ok
  to.failed += failed
}

/** A − B, as a 2×2 table row. */
const minus = (a, b) => ({ ok: a.ok - b.ok, failed: a.failed - b.failed })

class AttributionCounts {
  #log = new ChangeLog()
  #providerLabel
  #siteLabel
  /** Each child by its id in the log: `{ child, provider, site, ok, failed, expiryKey, token }`, or undefined once gone. */
  #slots = []
  /** child → id */
  #ids = new Map()
  /** Ids of children gone, for the next ones (the log and `#slots` stay as small as the family). */
  #free = []
  /** Real clock: `{ key, id, token }` by when (performance.now(), ms) a child's counts change by expiry alone. */
  #expiries = new Heap()
  #total = zero()
  /** provider → { sum, children, sites: Map(site → { sum, children }) } */
  #providers = new Map()
  /** site → { sum, children } */
  #sites = new Map()

  /** @param {{ provider: string, site: string }} attribution the label names */
  constructor(attribution) {
    this.#providerLabel = attribution.provider
    this.#siteLabel = attribution.site
  }

  /** A new child of `labels`: its counts join the sums. */
  add(child, labels) {
    const id = this.#free.length > 0 ? this.#free.pop() : this.#slots.length
    const provider = labels[this.#providerLabel]
    const site = labels[this.#siteLabel]
    this.#slots[id] = { child, provider, site, ok: 0, failed: 0, expiryKey: Infinity, token: 0 }
    this.#ids.set(child, id)
    this.#cells(provider, site, 1)
    this.#read(id, performance.now())
  }

  /** The child left the family: its counts leave the sums, and its changes are no longer logged. */
  remove(child) {
    const id = this.#ids.get(child)
    if (id === undefined) return
    const slot = this.#slots[id]
    this.#log.unwatch(child)
    this.#apply(slot, -slot.ok, -slot.failed)
    this.#cells(slot.provider, slot.site, -1)
    this.#ids.delete(child)
    this.#slots[id] = undefined
    this.#free.push(id)
  }

  /** Every child gone (the family closed). */
  clear() {
    for (const child of [...this.#ids.keys()]) this.remove(child)
    this.#expiries.clear()
  }

  /**
   * The 2×2 tables of lib/providers/blame.js for provider `p` and site `s`, from the sums
   * brought up to date: `{ provider: { suspect, rest }, sites: [{ suspect, rest }] }`
   * (a site test per provider with children).
   */
  tables(p, s) {
    this.#catchUp()
    const mine = this.#providers.get(p)
    const pAll = mine?.sum ?? zero()
    const pAtS = mine?.sites.get(s)?.sum ?? zero()
    const sAll = this.#sites.get(s)?.sum ?? zero()
    const suspect = minus(pAll, pAtS)
    const provider = { suspect, rest: minus(minus(this.#total, sAll), suspect) }
    const sites = []
    for (const { sum, sites: bySite } of this.#providers.values()) {
      const atS = bySite.get(s)?.sum ?? zero()
      sites.push({ suspect: { ...atS }, rest: minus(sum, atS) })
    }
    return { provider, sites }
  }

  /** Re-reads the children logged since the last call and those whose oldest events have left the window since. */
  #catchUp() {
    const now = performance.now()
    const done = new Set()
    for (const id of this.#log.drain()) {
      if (this.#slots[id] !== undefined && !done.has(id)) {
        done.add(id)
        this.#read(id, now)
      }
    }
    // Those due are taken out first: one read again below comes back due later, never in this loop.
    const due = []
    while (this.#expiries.size > 0 && this.#expiries.peek().key <= now) due.push(this.#expiries.pop())
    for (const { id, token } of due) {
      const slot = this.#slots[id]
      if (slot === undefined || slot.token !== token) continue
      slot.expiryKey = Infinity
      if (!done.has(id)) {
        done.add(id)
        this.#read(id, now)
      }
    }
  }

  /** Reads child `id`'s counts (which cleans its watch), moving its share of the sums; notes when expiry alone changes them. */
  #read(id, now) {
    const slot = this.#slots[id]
    const [ok, failed, expiresInMs] = this.#log.watchedCounts(slot.child, id)
    this.#apply(slot, ok - slot.ok, failed - slot.failed)
    slot.ok = ok
    slot.failed = failed
    // An earlier item in the heap stands (it only makes a read come early, which notes the later one).
    if (expiresInMs >= 0 && now + expiresInMs < slot.expiryKey) {
      slot.expiryKey = now + expiresInMs
      // Items of children re-read or gone stay until popped: dropped when they outnumber the children.
      if (this.#expiries.size > 2 * this.#ids.size + 64) this.#expiries.filter((item) => this.#slots[item.id]?.token === item.token)
      this.#expiries.push({ key: slot.expiryKey, id, token: ++slot.token })
    }
  }

  /** Adds (ok, failed) to every sum the child of `slot` is in. */
  #apply(slot, ok, failed) {
    if (ok === 0 && failed === 0) return
    const provider = this.#providers.get(slot.provider)
    for (const sum of [this.#total, provider.sum, provider.sites.get(slot.site).sum, this.#sites.get(slot.site).sum]) add(sum, ok, failed)
  }

  /** A child of (provider, site) joins (`sign` 1) or leaves (-1) its cells; a cell without children goes. */
  #cells(provider, site, sign) {
    let byProvider = this.#providers.get(provider)
    if (byProvider === undefined) this.#providers.set(provider, (byProvider = { sum: zero(), children: 0, sites: new Map() }))
    let cell = byProvider.sites.get(site)
    if (cell === undefined) byProvider.sites.set(site, (cell = { sum: zero(), children: 0 }))
    let bySite = this.#sites.get(site)
    if (bySite === undefined) this.#sites.set(site, (bySite = { sum: zero(), children: 0 }))
    for (const holder of [byProvider, cell, bySite]) holder.children += sign
    if (cell.children === 0) byProvider.sites.delete(site)
    if (byProvider.children === 0) this.#providers.delete(provider)
    if (bySite.children === 0) this.#sites.delete(site)
  }
}

module.exports = { AttributionCounts }

'use strict'
// Which child makes room when a family is full: the oldest whose window is
// empty, that has no listener of its own, no guard() in flight and no provider's
// back-off running (lib/guard/state.js: a child re-created for the same labels would
// not know it, and would send at once). Looking at
// every child for each new label set cost 11–19 ms at 10 000 children (issue
// 30), so each child sits where it was last seen:
//   candidates  may be evictable now (a heap by age: the oldest first)
//   waiting     held solves or a back-off when looked at: not evictable before
//               the instant its newest solve leaves the window and its back-offs
//               end (a heap by that instant; a later solve or back-off only
//               moves it later, so the instant is a bound)
//   blocked     has a listener of its own: back to candidates on its last off()
//   guarded     has a guard() in flight: looked at again on each eviction
// A refusal then costs O(1) when nothing changed, and each child is looked at
// again only once its window may have emptied.
const { inFlight } = require('../guard/guard.js')
const { windowEmptyFrom } = require('../native/load-native.js')
const { backoffEnd } = require('../guard/state.js')

/** A binary min-heap of items by their `key` (also lib/family/attribution-counts.js's). */
class Heap {
  #items = []

  get size() {
    return this.#items.length
  }

  peek() {
    return this.#items[0]
  }

  push(item) {
    const items = this.#items
    items.push(item)
    let i = items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (items[parent].key <= item.key) break
      items[i] = items[parent]
      i = parent
    }
    items[i] = item
  }

  pop() {
    const items = this.#items
    const top = items[0]
    const last = items.pop()
    if (items.length > 0) {
      let i = 0
      for (;;) {
        let least = 2 * i + 1
        if (least >= items.length) break
        if (least + 1 < items.length && items[least + 1].key < items[least].key) least++
        if (items[least].key >= last.key) break
        items[i] = items[least]
        i = least
      }
      items[i] = last
    }
    return top
  }

  clear() {
    this.#items = []
  }

  /** Keeps only the items `keep(item)` accepts. */
  filter(keep) {
    const items = this.#items.filter(keep)
    this.#items = []
    for (const item of items) this.push(item)
  }
}

class Eviction {
  #candidates = new Heap()
  #waiting = new Heap()
  /** @type {Map<object, object>} child → entry */
  #blocked = new Map()
  /** @type {Map<object, object>} child → entry */
  #guarded = new Map()
  /** How many children the family holds. */
  #children = 0

  /** A new child (`entry.seq` its age): a candidate. */
  add(child, entry) {
    this.#children++
    entry.evictToken = 0
    this.#candidate(child, entry)
  }

  /** The child left the family: whatever holds it forgets it. */
  remove(child, entry) {
    this.#children--
    entry.evictToken = -1
    this.#blocked.delete(child)
    this.#guarded.delete(child)
  }

  /** The child's last own listener is gone: it may be evictable again. */
  ownListenersGone(child, entry) {
    if (this.#blocked.delete(child)) this.#candidate(child, entry)
  }

  /**
   * The child to evict at `now` (the family's time, epoch ms), or undefined.
   * `settle(child)` brings a manual-clock child to the family's time first.
   */
  pick(now, settle) {
    for (const [child, entry] of this.#guarded) {
      if (!inFlight.has(child)) {
        this.#guarded.delete(child)
        this.#candidate(child, entry)
      }
    }
    while (this.#waiting.size > 0 && this.#waiting.peek().key <= now) {
      const { entry, token, child } = this.#waiting.pop()
      if (entry.evictToken === token) this.#candidate(child, entry)
    }
    while (this.#candidates.size > 0) {
      const { entry, token, child } = this.#candidates.pop()
      if (entry.evictToken !== token) continue
      if (entry.own.length > 0) {
        this.#blocked.set(child, entry)
        entry.evictToken++
      } else if (inFlight.has(child)) {
        this.#guarded.set(child, entry)
        entry.evictToken++
      } else {
        settle(child)
        const heldUntil = backoffEnd(child)
        if (child.total === 0 && heldUntil === null) return child
        // Solves in its window: not before its newest one leaves it; a back-off: not before it ends (on the child's clock).
        const emptyFrom = child.total === 0 ? now : (windowEmptyFrom(child) ?? now)
        this.#waiting.push({ key: Math.max(emptyFrom, heldUntil ?? now), entry, token: ++entry.evictToken, child })
      }
    }
    return undefined
  }

  clear() {
    this.#candidates.clear()
    this.#waiting.clear()
    this.#blocked.clear()
    this.#guarded.clear()
    this.#children = 0
  }

  #candidate(child, entry) {
    // Items of children that left stay in the heaps until popped: dropped when they outnumber the children.
    for (const heap of [this.#candidates, this.#waiting]) {
      if (heap.size > 2 * this.#children + 64) heap.filter((item) => item.entry.evictToken === item.token)
    }
    this.#candidates.push({ key: entry.seq, entry, token: ++entry.evictToken, child })
  }
}

module.exports = { Eviction, Heap }

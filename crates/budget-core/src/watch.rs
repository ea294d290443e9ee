//! Who must hear that a tracker's window counts changed: a family with
//! `attribution` keeps per-label sums of its children's counts (for
//! `family.blame()`, lib/family/attribution-counts.js) and re-reads only the
//! children whose counts changed, found in its [`ChangeLog`].
//!
//! A tracker's [`Watchers`] hold one watch per such family (a shared child is
//! in one family per thread). A watch is *clean* from the family's read of the
//! counts until they next change, then *dirty*: the change pushes the
//! tracker's id into that family's log once, and nothing more until the family
//! reads it again. Every change happens under the tracker's lock, and so does
//! every change of a watch (`TrackerState` calls these under it), so the
//! clean count is exact. The one change outside the lock, a record through the
//! lease (`lease.rs`), needs nothing: a lease is only granted by a locked record,
//! which leaves the watches dirty, and only a read that settles the lease
//! cleans them.
//!
//! Records pay one relaxed load of the clean count (0 when unwatched or when
//! every watch is dirty already).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use crate::sync::Mutex;

/// A family's log: the ids of its watched trackers whose counts changed since
/// it last read them, each once.
#[derive(Default)]
pub struct ChangeLog {
  ids: Mutex<Vec<u32>>,
}

impl ChangeLog {
  /// The ids logged since the last drain, emptying the log.
  pub fn drain(&self) -> Vec<u32> {
    std::mem::take(&mut *self.ids.lock())
  }
}

/// One family's watch of a tracker.
struct Watch {
  log: Arc<ChangeLog>,
  /// The tracker's id in that family.
  id: u32,
  dirty: bool,
}

/// The watches of one tracker. Changed under the tracker's lock only.
#[derive(Default)]
pub struct Watchers {
  /// How many watches are clean: the only ones a change must reach.
  clean: AtomicUsize,
  list: Mutex<Vec<Watch>>,
}

impl Watchers {
  /// Whether a change must be told (some watch is clean).
  #[inline]
  pub fn any_clean(&self) -> bool {
    self.clean.load(Relaxed) != 0
  }

  /// The counts changed: every clean watch logs the tracker's id and turns dirty.
  #[cold]
  pub fn mark(&self) {
    let mut list = self.list.lock();
    for watch in list.iter_mut().filter(|w| !w.dirty) {
      watch.dirty = true;
      watch.log.ids.lock().push(watch.id);
    }
    self.clean.store(0, Relaxed);
  }

  /// `log`'s family has read the counts: its watch (added as `id` if new) is clean.
  pub fn clean(&self, log: &Arc<ChangeLog>, id: u32) {
    let mut list = self.list.lock();
    match list.iter_mut().find(|w| Arc::ptr_eq(&w.log, log)) {
      Some(watch) if !watch.dirty => return,
      Some(watch) => {
        watch.dirty = false;
        watch.id = id;
      }
      None => list.push(Watch { log: Arc::clone(log), id, dirty: false }),
    }
    self.clean.fetch_add(1, Relaxed);
  }

  /// `log`'s family no longer holds the tracker.
  pub fn remove(&self, log: &Arc<ChangeLog>) {
    let mut list = self.list.lock();
    if let Some(i) = list.iter().position(|w| Arc::ptr_eq(&w.log, log)) {
      if !list.swap_remove(i).dirty {
        self.clean.fetch_sub(1, Relaxed);
      }
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn a_change_logs_each_clean_watch_once_until_it_is_read_again() {
    let (a, b) = (Arc::new(ChangeLog::default()), Arc::new(ChangeLog::default()));
    let watchers = Watchers::default();
    assert!(!watchers.any_clean(), "unwatched");
    watchers.clean(&a, 7);
    watchers.clean(&b, 3);
    watchers.clean(&b, 3);
    assert!(watchers.any_clean());
    watchers.mark();
    watchers.mark();
    assert!(!watchers.any_clean(), "both dirty");
    assert_eq!((a.drain(), b.drain()), (vec![7], vec![3]), "one entry each, however many changes");
    watchers.clean(&a, 7);
    watchers.mark();
    assert_eq!((a.drain(), b.drain()), (vec![7], vec![]), "b was not read again: still dirty, not logged again");
    watchers.clean(&a, 7);
    watchers.remove(&a);
    assert!(!watchers.any_clean(), "a gone, b dirty");
    watchers.mark();
    assert_eq!(a.drain(), Vec::<u32>::new());
  }
}

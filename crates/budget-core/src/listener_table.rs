//! The listeners of one tracker handle, by event kind, on its JS thread: what
//! `on()` adds, `off()` removes and a delivery calls. Generic over the
//! listener, the binding's reference to a JS function.

use std::rc::Rc;

use crate::event_kind::EventKind;

/// A handle's listeners by event kind, in the order they were added.
pub struct ListenerTable<L> {
  by_kind: [Vec<Rc<L>>; EventKind::COUNT],
  /// Set by `close` while transitions are still queued: the last delivery clears the table.
  closing: bool,
}

impl<L> Default for ListenerTable<L> {
  fn default() -> Self {
    ListenerTable { by_kind: std::array::from_fn(|_| Vec::new()), closing: false }
  }
}

impl<L> ListenerTable<L> {
  /// Adds `listener` for `kind`.
  pub fn add(&mut self, kind: EventKind, listener: L) {
    self.by_kind[kind.index()].push(Rc::new(listener));
  }

  /// Removes the most recently added listener for `kind` that `is_it` says
  /// is the one; whether there was one.
  pub fn remove<E>(&mut self, kind: EventKind, mut is_it: impl FnMut(&L) -> Result<bool, E>) -> Result<bool, E> {
    let list = &mut self.by_kind[kind.index()];
    for i in (0..list.len()).rev() {
      if is_it(&list[i])? {
        list.remove(i);
        return Ok(true);
      }
    }
    Ok(false)
  }

  /// The listeners for the kind at `index`, copied: a listener may call
  /// `on()`/`off()` while they are called.
  pub fn for_kind(&self, index: usize) -> Vec<Rc<L>> {
    self.by_kind[index].clone()
  }

  /// The tracker handle closed: drops every listener now when nothing is
  /// queued for them (`idle`), else once the queued transitions are delivered.
  pub fn close(&mut self, idle: bool) {
    if idle {
      self.by_kind.iter_mut().for_each(Vec::clear);
    } else {
      self.closing = true;
    }
  }

  /// Whether it waits for the last queued delivery to clear it.
  pub fn is_closing(&self) -> bool {
    self.closing
  }

  /// Whether no listener is registered.
  pub fn is_empty(&self) -> bool {
    self.by_kind.iter().all(Vec::is_empty)
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::Status;

  const WARNING: EventKind = EventKind::Status(Status::Warning);

  fn names(table: &ListenerTable<&'static str>, kind: EventKind) -> Vec<&'static str> {
    table.for_kind(kind.index()).iter().map(|l| **l).collect()
  }

  #[test]
  fn off_removes_the_most_recent_registration_of_that_kind_only() {
    let mut table = ListenerTable::default();
    assert!(table.is_empty());
    for (kind, name) in [(WARNING, "a"), (WARNING, "b"), (WARNING, "a"), (EventKind::Alert, "a")] {
      table.add(kind, name);
    }
    assert_eq!(table.remove(WARNING, |l| Ok::<_, ()>(*l == "a")), Ok(true));
    assert_eq!(names(&table, WARNING), ["a", "b"]);
    assert_eq!(names(&table, EventKind::Alert), ["a"]);
    assert_eq!(table.remove(EventKind::Resolve, |l| Ok::<_, ()>(*l == "a")), Ok(false));
    assert_eq!(table.remove(WARNING, |_| Err("cannot compare")), Err("cannot compare"));
    assert_eq!(names(&table, WARNING), ["a", "b"], "an error removes nothing");
  }

  #[test]
  fn close_clears_at_once_when_idle_else_marks_it_closing() {
    let mut table = ListenerTable::default();
    table.add(EventKind::Alert, "a");
    table.close(false);
    assert!(table.is_closing() && !table.is_empty());
    table.close(true);
    assert!(table.is_empty());
  }
}

//! The events a tracker's listeners listen to (`on(name, listener)`), by name
//! and by index: the core's statuses, then an alert starting or stopping.

use crate::{Event, Status as CoreStatus};

/// What a listener listens to: a status, or an alert starting or stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
  /// The status became this one.
  Status(CoreStatus),
  /// An alert pair started firing.
  Alert,
  /// An alert pair stopped firing.
  Resolve,
}

/// The names of the event kinds, by `EventKind::index`: the core's statuses
/// (`Status::ALL`, the one list), then the two alert events.
pub fn kind_name(index: usize) -> &'static str {
  match CoreStatus::ALL.get(index) {
    Some(status) => status.as_str(),
    None => ["alert", "resolve"].get(index - CoreStatus::ALL.len()).copied().unwrap_or("?"),
  }
}

/// The names `on()` and `off()` accept, quoted, for messages.
pub fn event_names() -> String {
  (0..EventKind::COUNT).map(|i| format!("'{}'", kind_name(i))).collect::<Vec<_>>().join(", ")
}

impl EventKind {
  /// How many kinds there are: the statuses, `alert` and `resolve`.
  pub const COUNT: usize = CoreStatus::ALL.len() + 2;

  /// The kind called `name`, if any.
  pub fn parse(name: &str) -> Option<EventKind> {
    match name {
      "alert" => Some(EventKind::Alert),
      "resolve" => Some(EventKind::Resolve),
      _ => CoreStatus::parse(name).map(EventKind::Status),
    }
  }

  /// Its index: the core's status index, then `alert`, `resolve`.
  pub fn index(self) -> usize {
    match self {
      EventKind::Status(s) => s.index(),
      EventKind::Alert => CoreStatus::ALL.len(),
      EventKind::Resolve => CoreStatus::ALL.len() + 1,
    }
  }

  /// The kind of listener `event` is for.
  pub fn of(event: &Event) -> EventKind {
    match event {
      Event::Status(t, _) => EventKind::Status(t.to),
      Event::Alert { fired: true, .. } => EventKind::Alert,
      Event::Alert { fired: false, .. } => EventKind::Resolve,
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn the_names_are_the_statuses_then_the_alert_events() {
    assert_eq!(event_names(), "'healthy', 'warning', 'critical', 'exhausted', 'alert', 'resolve'");
    assert_eq!(kind_name(99), "?");
  }

  #[test]
  fn each_name_parses_to_its_kind_at_its_index() {
    for index in 0..EventKind::COUNT {
      let kind = EventKind::parse(kind_name(index)).unwrap();
      assert_eq!(kind.index(), index);
    }
    assert_eq!(EventKind::parse("critical"), Some(EventKind::Status(CoreStatus::Critical)));
    assert_eq!(EventKind::parse("resolve").map(EventKind::index), Some(5));
    assert_eq!(EventKind::parse("Alert"), None);
    assert_eq!(EventKind::parse(""), None);
  }
}

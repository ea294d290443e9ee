//! Solve-log parsing for `captcha-budget replay`: JSON Lines or CSV, one event
//! per line, read a chunk at a time so that a log of any size streams through.
//!
//! Each non-blank line yields a timestamp (epoch ms, or an ISO 8601 string),
//! an outcome and a CAPTCHA type — or a bad-line message with its line number.
//! Parsing lives here rather than in JavaScript for speed and strictness: it
//! reads 2.6× as many lines a second as `JSON.parse` per line (`npm run
//! bench:replay`), and ISO 8601 is read to the letter, not as `Date.parse` guesses.

use std::collections::HashMap;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Latest timestamp accepted, in epoch ms: JavaScript's largest `Date`.
pub const MAX_TIMESTAMP_MS: f64 = 8.64e15;

/// The longest line read, in bytes (1 MiB): a longer one is one bad line
/// ([`line_too_long`]), and the reader holds no more than this of it.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The bad-line message of a line of `bytes` bytes, over [`MAX_LINE_BYTES`]
/// (lib/cli/replay/reader.js says the same of a line it skipped).
pub fn line_too_long(bytes: usize) -> String {
  format!("line too long: {bytes} bytes, over the 1 MiB ({MAX_LINE_BYTES} bytes) a line may hold")
}

/// The names of the three fields of an event (JSON keys or CSV header columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFields {
  /// Timestamp field, `ts` by default.
  pub ts: String,
  /// Outcome field, `ok` by default.
  pub ok: String,
  /// CAPTCHA type field, `type` by default; optional in each line.
  pub ty: String,
  /// Further fields an event is grouped by (`replay --by type,site`), each
  /// optional like `ty`. When there are any, an event's type is the values of
  /// `ty` and these, in order, joined by [`GROUP_SEPARATOR`].
  pub more: Vec<String>,
}

/// What joins the values of the grouping fields into one type (`LogFields::more`):
/// U+001F, the unit separator, which no CAPTCHA type or site name holds.
pub const GROUP_SEPARATOR: char = '\u{1f}';

impl Default for LogFields {
  fn default() -> Self {
    LogFields { ts: "ts".into(), ok: "ok".into(), ty: "type".into(), more: Vec::new() }
  }
}

/// How the lines of a log are laid out.
#[derive(Debug, Clone)]
pub enum LogFormat {
  /// One JSON object per line; other keys are ignored.
  JsonLines(LogFields),
  /// Comma-separated fields (RFC 4180 quoting, no newline inside a field),
  /// with the column of each field found in the header by the caller.
  Csv {
    /// Field names, for messages.
    fields: LogFields,
    /// Column index of the timestamp.
    ts: usize,
    /// Column index of the outcome.
    ok: usize,
    /// Column index of the type, if the header has one.
    ty: Option<usize>,
    /// Column index of each of `fields.more`, if the header has it.
    more: Vec<Option<usize>>,
  },
}

/// A line that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
  /// 1-based line number in the whole input.
  pub line: u64,
  /// What is wrong with it.
  pub message: String,
}

/// The events of one chunk, column by column, in line order.
#[derive(Debug)]
pub struct ParsedChunk {
  /// Timestamps, epoch ms.
  pub ts: Vec<f64>,
  /// Outcomes: 1 success, 0 failure.
  pub ok: Vec<u8>,
  /// Index of each event's type in `types`.
  pub type_index: Vec<u32>,
  /// The types seen in this chunk, in order of appearance; `""` when a line has none.
  pub types: Vec<String>,
  /// Lines skipped, with the reason.
  pub bad_lines: Vec<BadLine>,
  /// Lines consumed (blank and bad ones included).
  pub lines: u64,
  /// Bytes consumed: up to the last newline, or everything with `last`.
  pub consumed: usize,
  /// The latest timestamp of the events so far, this chunk's and the earlier
  /// ones' (`-∞` before the first).
  pub latest_ms: f64,
}

impl Default for ParsedChunk {
  fn default() -> Self {
    ParsedChunk {
      ts: Vec::new(),
      ok: Vec::new(),
      type_index: Vec::new(),
      types: Vec::new(),
      bad_lines: Vec::new(),
      lines: 0,
      consumed: 0,
      latest_ms: f64::NEG_INFINITY,
    }
  }
}

/// The message of a timestamp more than [`MAX_JUMP_MS`] after `latest_ms`.
fn far_ahead(ts: f64, latest_ms: f64) -> String {
  let days = ((ts - latest_ms) / 86_400_000.0).floor();
  let (at, before) = (iso_date_time(ts).unwrap_or_default(), iso_date_time(latest_ms).unwrap_or_default());
  format!(
    "bad timestamp {at}: {days} days after the latest before it ({before}), far outside the log's range (at most 366 days ahead)"
  )
}

/// A timestamp later than every one before it by more than this (366 days) is
/// far outside the log's range: a bad line, not a jump that would leave every
/// later solve older than the window.
pub const MAX_JUMP_MS: f64 = 366.0 * 86_400_000.0;

/// Parses the complete lines of `buf`, the first of which is line `first_line`.
/// A trailing line without a newline is left unconsumed unless `last` says the
/// input ends with this chunk. Blank lines are skipped; `\r\n` endings are fine.
pub fn parse_chunk(buf: &[u8], format: &LogFormat, first_line: u64, last: bool) -> ParsedChunk {
  parse_chunk_after(buf, format, first_line, last, f64::NEG_INFINITY)
}

/// [`parse_chunk`] for a chunk whose earlier lines' latest timestamp was
/// `latest_ms` (`-∞` for none): a timestamp more than [`MAX_JUMP_MS`] after
/// the latest one before it is a bad line. `ParsedChunk::latest_ms` carries
/// the latest on to the next chunk.
pub fn parse_chunk_after(buf: &[u8], format: &LogFormat, first_line: u64, last: bool, latest_ms: f64) -> ParsedChunk {
  let out = ParsedChunk { latest_ms, ..ParsedChunk::default() };
  let mut parser = ChunkParser { out, interned: HashMap::new(), csv: CsvSplitter::new() };
  let mut pos = 0;
  loop {
    let (line, next) = match memchr::memchr(b'\n', &buf[pos..]) {
      Some(i) => (&buf[pos..pos + i], pos + i + 1),
      None if last && pos < buf.len() => (&buf[pos..], buf.len()),
      None => break,
    };
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let number = first_line + parser.out.lines;
    if line.len() > MAX_LINE_BYTES {
      parser.out.bad_lines.push(BadLine { line: number, message: line_too_long(line.len()) });
    } else if line.iter().any(|b| !b.is_ascii_whitespace()) {
      let parsed = match format {
        LogFormat::JsonLines(fields) => json_line(line, fields),
        LogFormat::Csv { fields, ts, ok, ty, more } => parser.csv.line(line, fields, *ts, *ok, *ty, more),
      };
      let latest = parser.out.latest_ms;
      match parsed {
        Ok((ts, _, _)) if latest.is_finite() && ts - latest > MAX_JUMP_MS => {
          let message = far_ahead(ts, latest);
          parser.out.bad_lines.push(BadLine { line: number, message })
        }
        Ok((ts, ok, ty)) => {
          parser.out.latest_ms = latest.max(ts);
          parser.push(ts, ok, &ty)
        }
        Err(message) => parser.out.bad_lines.push(BadLine { line: number, message }),
      }
    }
    parser.out.lines += 1;
    pos = next;
  }
  parser.out.consumed = pos;
  parser.out
}

struct ChunkParser {
  out: ParsedChunk,
  interned: HashMap<String, u32>,
  csv: CsvSplitter,
}

impl ChunkParser {
  fn push(&mut self, ts: f64, ok: bool, ty: &str) {
    let index = self.intern(ty);
    self.out.ts.push(ts);
    self.out.ok.push(ok as u8);
    self.out.type_index.push(index);
  }

  fn intern(&mut self, ty: &str) -> u32 {
    // A log has a handful of types: a scan beats hashing until there are many.
    let types = &self.out.types;
    let found = if types.len() <= 8 {
      types.iter().position(|t| t == ty).map(|i| i as u32)
    } else {
      self.interned.get(ty).copied()
    };
    if let Some(i) = found {
      return i;
    }
    let i = types.len() as u32;
    self.out.types.push(ty.to_owned());
    self.interned.insert(ty.to_owned(), i);
    i
  }
}

/// One parsed event: timestamp, outcome, type (`""` when absent).
type Event<'a> = (f64, bool, std::borrow::Cow<'a, str>);

// ---------------------------------------------------------------- values

/// Numeric timestamps at or above this (year 5138) are no epoch ms a log holds:
/// the digits of epoch µs or ns (16 or 19 digits today), refused with a hint.
pub const MAX_NUMERIC_MS: f64 = 1e14;

/// Numeric timestamps in `SECONDS_LOW ≤ t < SECONDS_HIGH` (10 digits: 12 Jan …
/// 26 Apr 1970 as ms) are epoch seconds of 2001 … 2286, refused with a hint
/// rather than read as 1970.
pub const SECONDS_LOW: f64 = 1e9;
/// See [`SECONDS_LOW`].
pub const SECONDS_HIGH: f64 = 1e10;

/// Reads a timestamp written as text: digits are epoch ms (see [`check_numeric_ms`]),
/// anything else must be ISO 8601.
pub fn parse_timestamp(text: &str) -> Result<f64, String> {
  if !text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit()) {
    return check_numeric_ms(text.parse::<f64>().unwrap_or(f64::NAN), || text.to_owned());
  }
  match parse_iso8601(text) {
    Some(ms) => check_ms(ms, || text.to_owned()),
    None => Err(format!("bad timestamp {text:?}: not epoch ms or ISO 8601")),
  }
}

fn check_ms(ms: f64, shown: impl FnOnce() -> String) -> Result<f64, String> {
  if ms.is_finite() && (0.0..=MAX_TIMESTAMP_MS).contains(&ms) {
    Ok(ms)
  } else {
    Err(format!("bad timestamp {}: outside 1970-01-01 … 275760-09-13 (0 … 8.64e15 epoch ms)", shown()))
  }
}

/// A timestamp given as a number (or digits) must be plausible epoch ms: from
/// 0 up to [`MAX_NUMERIC_MS`], outside the epoch-seconds band. The 10-digit
/// epoch seconds and the 16- or 19-digit µs and ns are bad lines whose message
/// says what they look like, never a date in 1970 or in the year 58142.
pub fn check_numeric_ms(ms: f64, shown: impl FnOnce() -> String) -> Result<f64, String> {
  let (unit, per_ms, advice) = if !ms.is_finite() || ms < 0.0 {
    return check_ms(ms, shown);
  } else if (SECONDS_LOW..SECONDS_HIGH).contains(&ms) {
    ("seconds", 1e-3, "multiply by 1000")
  } else if (MAX_NUMERIC_MS..1e17).contains(&ms) {
    ("microseconds", 1e3, "divide by 1000")
  } else if (1e17..1e20).contains(&ms) {
    ("nanoseconds", 1e6, "divide by 1000000")
  } else if ms >= MAX_NUMERIC_MS {
    return Err(format!("bad timestamp {}: above 1e14 epoch ms (the year 5138): not epoch ms", shown()));
  } else {
    return Ok(ms);
  };
  let date = iso_date_time(ms / per_ms).unwrap_or_default();
  Err(format!(
    "bad timestamp {}: looks like epoch {unit} ({date} if so); timestamps are epoch ms: {advice}, or write ISO 8601",
    shown()
  ))
}

/// Epoch ms as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds), for messages; `None`
/// outside JavaScript's `Date` range.
fn iso_date_time(ms: f64) -> Option<String> {
  if !ms.is_finite() || ms.abs() > MAX_TIMESTAMP_MS {
    return None;
  }
  let secs = (ms / 1000.0).floor() as i64;
  let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
  let (year, month, day) = civil_from_days(days);
  Some(format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest / 60 % 60, rest % 60))
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
  let z = days + 719_468;
  let era = z.div_euclid(146_097);
  let doe = z - era * 146_097;
  let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
  let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  let mp = (5 * doy + 2) / 153;
  let day = doy - (153 * mp + 2) / 5 + 1;
  let month = if mp < 10 { mp + 3 } else { mp - 9 };
  (if month <= 2 { era * 400 + yoe + 1 } else { era * 400 + yoe }, month, day)
}

/// ISO 8601 date or date-time to epoch ms: `YYYY-MM-DD`, optionally followed by
/// `T` (or a space) and `HH:MM[:SS[.fff…]]`, then `Z`, `±HH:MM`, `±HHMM`, `±HH`
/// or nothing — no offset means UTC (logs are written in UTC; the local time
/// zone of whoever replays them is irrelevant). Fractions below 1 ms are cut.
pub fn parse_iso8601(text: &str) -> Option<f64> {
  let b = text.as_bytes();
  let year = digits(b, 0, 4)?;
  let month = digits(b, 5, 2)?;
  let day = digits(b, 8, 2)?;
  if b[4] != b'-' || b[7] != b'-' || !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
    return None;
  }
  let mut ms = days_from_civil(year, month, day) as f64 * 86_400_000.0;
  if b.len() == 10 {
    return Some(ms);
  }
  if !matches!(b[10], b'T' | b't' | b' ') {
    return None;
  }
  let hour = digits(b, 11, 2)?;
  let minute = digits(b, 14, 2)?;
  if b.get(13) != Some(&b':') || hour > 23 || minute > 59 {
    return None;
  }
  let mut i = 16;
  let mut second = 0;
  let mut millis = 0;
  if b.get(i) == Some(&b':') {
    second = digits(b, 17, 2)?;
    if second > 59 {
      return None;
    }
    i = 19;
    if matches!(b.get(i), Some(b'.' | b',')) {
      let start = i + 1;
      i = start;
      while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
      }
      if i == start {
        return None;
      }
      for k in 0..3 {
        millis = millis * 10 + b.get(start + k).filter(|_| start + k < i).map_or(0, |d| (d - b'0') as i64);
      }
    }
  }
  ms += ((hour * 60 + minute) * 60 + second) as f64 * 1000.0 + millis as f64;
  let offset_minutes = match &b[i..] {
    [] | [b'Z' | b'z'] => 0,
    [sign @ (b'+' | b'-'), rest @ ..] => {
      let (h, m) = match rest {
        [_, _] => (digits(rest, 0, 2)?, 0),
        [_, _, _, _] => (digits(rest, 0, 2)?, digits(rest, 2, 2)?),
        [_, _, b':', _, _] => (digits(rest, 0, 2)?, digits(rest, 3, 2)?),
        _ => return None,
      };
      if h > 23 || m > 59 {
        return None;
      }
      if *sign == b'+' {
        h * 60 + m
      } else {
        -(h * 60 + m)
      }
    }
    _ => return None,
  };
  Some(ms - offset_minutes as f64 * 60_000.0)
}

fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
  let part = b.get(at..at + n)?;
  part.iter().try_fold(0i64, |acc, &d| d.is_ascii_digit().then(|| acc * 10 + (d - b'0') as i64))
}

fn is_leap(year: i64) -> bool {
  year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
  match month {
    2 if is_leap(year) => 29,
    2 => 28,
    4 | 6 | 9 | 11 => 30,
    _ => 31,
  }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
  let y = if month <= 2 { year - 1 } else { year };
  let era = y.div_euclid(400);
  let yoe = y - era * 400;
  let mp = (month + 9) % 12;
  let doy = (153 * mp + 2) / 5 + day - 1;
  let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  era * 146_097 + doe - 719_468
}

/// Reads an outcome written as text: `true`/`false` (any case) or `1`/`0`.
fn parse_ok_text(text: &str) -> Option<bool> {
  match text {
    "1" => Some(true),
    "0" => Some(false),
    t if t.eq_ignore_ascii_case("true") => Some(true),
    t if t.eq_ignore_ascii_case("false") => Some(false),
    _ => None,
  }
}

fn bad_ok(field: &str, shown: &str) -> String {
  format!("bad {field} {shown}: expected true, false, 1 or 0")
}

// ---------------------------------------------------------------- JSON Lines

/// What a line said about one field; `Bad` holds a description of the value.
enum Value<T> {
  Missing,
  Good(T),
  Bad(String),
}

struct Line<'de> {
  /// The timestamp's own verdict rides in `Good`: ISO text can be bad in its own way.
  ts: Value<Result<f64, String>>,
  ok: Value<bool>,
  ty: Value<std::borrow::Cow<'de, str>>,
  more: Vec<Value<std::borrow::Cow<'de, str>>>,
}

fn json_line<'a>(line: &'a [u8], fields: &LogFields) -> Result<Event<'a>, String> {
  if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
    return Err("not a JSON object".into());
  }
  let mut de = serde_json::Deserializer::from_slice(line);
  let parsed = LineSeed(fields).deserialize(&mut de).and_then(|line| de.end().map(|_| line));
  let parsed = parsed.map_err(|e| {
    let text = e.to_string();
    let message = text.rsplit_once(" at line ").map_or(text.as_str(), |(m, _)| m);
    format!("invalid JSON at column {}: {message}", e.column())
  })?;
  let ts = match parsed.ts {
    Value::Missing => return Err(format!("missing field {:?}", fields.ts)),
    Value::Bad(shown) => return Err(format!("bad timestamp {shown}: not epoch ms or ISO 8601")),
    Value::Good(Err(message)) => return Err(message),
    Value::Good(Ok(ms)) => ms,
  };
  let ok = match parsed.ok {
    Value::Missing => return Err(format!("missing field {:?}", fields.ok)),
    Value::Bad(shown) => return Err(bad_ok(&fields.ok, &shown)),
    Value::Good(ok) => ok,
  };
  let ty = group_value(parsed.ty, &fields.ty)?;
  if fields.more.is_empty() {
    return Ok((ts, ok, ty));
  }
  let mut key = ty.into_owned();
  for (value, name) in parsed.more.into_iter().zip(&fields.more) {
    key.push(GROUP_SEPARATOR);
    key.push_str(&group_value(value, name)?);
  }
  Ok((ts, ok, key.into()))
}

/// A grouping field's value: a string, `""` when missing or null.
fn group_value<'a>(value: Value<std::borrow::Cow<'a, str>>, name: &str) -> Result<std::borrow::Cow<'a, str>, String> {
  match value {
    Value::Missing => Ok("".into()),
    Value::Bad(shown) => Err(format!("bad {name} {shown}: expected a string")),
    Value::Good(v) if v.contains(GROUP_SEPARATOR) => Err(format!("bad {name} {v:?}: holds U+001F")),
    Value::Good(v) => Ok(v),
  }
}

struct LineSeed<'f>(&'f LogFields);

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
  type Value = Line<'de>;
  fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
    d.deserialize_map(self)
  }
}

impl<'de> Visitor<'de> for LineSeed<'_> {
  type Value = Line<'de>;
  fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
    f.write_str("a JSON object")
  }
  fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
    let more = self.0.more.iter().map(|_| Value::Missing).collect();
    let mut line = Line { ts: Value::Missing, ok: Value::Missing, ty: Value::Missing, more };
    while let Some(key) = map.next_key_seed(KeySeed(self.0))? {
      match key {
        Key::Ts => line.ts = map.next_value_seed(AnyValue)?.into_ts(),
        Key::Ok => line.ok = map.next_value_seed(AnyValue)?.into_ok(),
        Key::Ty => line.ty = map.next_value_seed(AnyValue)?.into_ty(),
        Key::More(i) => line.more[i] = map.next_value_seed(AnyValue)?.into_ty(),
        Key::Other => {
          map.next_value::<IgnoredAny>()?;
        }
      }
    }
    Ok(line)
  }
}

enum Key {
  Ts,
  Ok,
  Ty,
  More(usize),
  Other,
}

struct KeySeed<'f>(&'f LogFields);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
  type Value = Key;
  fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
    d.deserialize_str(self)
  }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
  type Value = Key;
  fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
    f.write_str("a key")
  }
  fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
    Ok(if key == self.0.ts {
      Key::Ts
    } else if key == self.0.ok {
      Key::Ok
    } else if key == self.0.ty {
      Key::Ty
    } else if let Some(i) = self.0.more.iter().position(|m| m == key) {
      Key::More(i)
    } else {
      Key::Other
    })
  }
}

/// A field's JSON value, reduced to what the field can use.
enum Json<'de> {
  Null,
  Bool(bool),
  /// The value, and the integer exactly as written when it is one (an f64
  /// would quote 9007199254740993 as …992).
  Number(f64, Option<i128>),
  Str(std::borrow::Cow<'de, str>),
  /// Anything else, described for the message.
  Other(&'static str),
}

impl<'de> Json<'de> {
  fn shown(&self) -> String {
    match self {
      Json::Null => "null".into(),
      Json::Bool(b) => b.to_string(),
      Json::Number(_, Some(exact)) => exact.to_string(),
      Json::Number(n, None) => n.to_string(),
      Json::Str(s) => format!("{s:?}"),
      Json::Other(what) => (*what).into(),
    }
  }
  fn into_ts(self) -> Value<Result<f64, String>> {
    match self {
      Json::Number(n, _) => Value::Good(check_numeric_ms(n, || self.shown())),
      Json::Str(ref s) => Value::Good(parse_timestamp(s)),
      _ => Value::Bad(self.shown()),
    }
  }
  fn into_ok(self) -> Value<bool> {
    match &self {
      Json::Bool(b) => Value::Good(*b),
      Json::Number(n, _) if *n == 1.0 || *n == 0.0 => Value::Good(*n == 1.0),
      Json::Str(s) => parse_ok_text(s).map_or_else(|| Value::Bad(self.shown()), Value::Good),
      _ => Value::Bad(self.shown()),
    }
  }
  fn into_ty(self) -> Value<std::borrow::Cow<'de, str>> {
    match self {
      Json::Null => Value::Missing,
      Json::Str(s) => Value::Good(s),
      other => Value::Bad(other.shown()),
    }
  }
}

struct AnyValue;

impl<'de> DeserializeSeed<'de> for AnyValue {
  type Value = Json<'de>;
  fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
    d.deserialize_any(self)
  }
}

impl<'de> Visitor<'de> for AnyValue {
  type Value = Json<'de>;
  fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
    f.write_str("a JSON value")
  }
  fn visit_unit<E>(self) -> Result<Json<'de>, E> {
    Ok(Json::Null)
  }
  fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
    Ok(Json::Bool(v))
  }
  fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
    Ok(Json::Number(v as f64, Some(v.into())))
  }
  fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
    Ok(Json::Number(v as f64, Some(v.into())))
  }
  fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
    Ok(Json::Number(v, None))
  }
  fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
    Ok(Json::Str(v.into()))
  }
  fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
    // A string with escapes: serde_json hands over a transient copy.
    Ok(Json::Str(v.to_owned().into()))
  }
  fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(Json::Other("an object"))
  }
  fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(Json::Other("an array"))
  }
}

// ---------------------------------------------------------------- CSV

/// Splits one CSV line into fields with `csv-core` (quotes, doubled quotes).
struct CsvSplitter {
  reader: csv_core::Reader,
  out: Vec<u8>,
  ends: Vec<usize>,
}

impl CsvSplitter {
  fn new() -> Self {
    CsvSplitter { reader: csv_core::Reader::new(), out: Vec::new(), ends: vec![0; 16] }
  }

  fn fields(&mut self, line: &[u8]) -> usize {
    self.reader.reset();
    if self.out.len() < line.len() {
      self.out.resize(line.len(), 0);
    }
    let (mut input, mut written, mut count) = (line, 0, 0);
    loop {
      let (result, n_in, n_out, n_ends) =
        self.reader.read_record(input, &mut self.out[written..], &mut self.ends[count..]);
      input = &input[n_in..];
      written += n_out;
      count += n_ends;
      match result {
        csv_core::ReadRecordResult::OutputEndsFull => self.ends.resize(self.ends.len() * 2, 0),
        csv_core::ReadRecordResult::OutputFull => self.out.resize(self.out.len() * 2 + 1, 0),
        csv_core::ReadRecordResult::Record | csv_core::ReadRecordResult::End => return count,
        csv_core::ReadRecordResult::InputEmpty => {}
      }
    }
  }

  fn field(&self, count: usize, i: usize) -> Option<&[u8]> {
    if i >= count {
      return None;
    }
    let start = if i == 0 { 0 } else { self.ends[i - 1] };
    Some(self.out[start..self.ends[i]].trim_ascii())
  }

  fn line<'a>(
    &mut self,
    line: &[u8],
    fields: &LogFields,
    ts_col: usize,
    ok_col: usize,
    ty_col: Option<usize>,
    more_cols: &[Option<usize>],
  ) -> Result<Event<'a>, String> {
    let count = self.fields(line);
    let text = |i: usize, name: &str| -> Result<Option<&str>, String> {
      match self.field(count, i) {
        None | Some(b"") => Ok(None),
        Some(bytes) => std::str::from_utf8(bytes).map(Some).map_err(|_| format!("field {name:?} is not valid UTF-8")),
      }
    };
    let ts = match text(ts_col, &fields.ts)? {
      None => return Err(format!("missing field {:?}", fields.ts)),
      Some(t) => parse_timestamp(t)?,
    };
    let ok = match text(ok_col, &fields.ok)? {
      None => return Err(format!("missing field {:?}", fields.ok)),
      Some(t) => parse_ok_text(t).ok_or_else(|| bad_ok(&fields.ok, &format!("{t:?}")))?,
    };
    let column = |col: Option<usize>, name: &str| -> Result<&str, String> {
      let value = match col {
        Some(col) => text(col, name)?.unwrap_or(""),
        None => "",
      };
      if value.contains(GROUP_SEPARATOR) {
        return Err(format!("bad {name} {value:?}: holds U+001F"));
      }
      Ok(value)
    };
    let mut ty = if more_cols.is_empty() {
      match ty_col {
        Some(col) => text(col, &fields.ty)?.unwrap_or("").to_owned(),
        None => String::new(),
      }
    } else {
      column(ty_col, &fields.ty)?.to_owned()
    };
    for (col, name) in more_cols.iter().zip(&fields.more) {
      ty.push(GROUP_SEPARATOR);
      ty.push_str(column(*col, name)?);
    }
    Ok((ts, ok, ty.into()))
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  const DAY: f64 = 86_400_000.0;
  // 2026-03-01T00:00:00Z: 56 years of 365 days plus 14 leap days (1972 … 2024), plus Jan and Feb 2026.
  const MAR_1_2026: f64 = ((56 * 365 + 14 + 31 + 28) as f64) * DAY;

  fn jsonl(text: &str) -> ParsedChunk {
    parse_chunk(text.as_bytes(), &LogFormat::JsonLines(LogFields::default()), 1, true)
  }

  fn csv(text: &str, ty: Option<usize>) -> ParsedChunk {
    let format = LogFormat::Csv { fields: LogFields::default(), ts: 0, ok: 1, ty, more: Vec::new() };
    parse_chunk(text.as_bytes(), &format, 2, true)
  }

  fn bad(chunk: &ParsedChunk) -> Vec<(u64, &str)> {
    chunk.bad_lines.iter().map(|b| (b.line, b.message.as_str())).collect()
  }

  #[test]
  fn iso_8601_forms() {
    assert_eq!(parse_iso8601("2026-03-01"), Some(MAR_1_2026));
    assert_eq!(parse_iso8601("2026-03-01T00:00:00Z"), Some(MAR_1_2026));
    assert_eq!(parse_iso8601("2026-03-01T12:34:56.789Z"), Some(MAR_1_2026 + 45_296_789.0));
    assert_eq!(parse_iso8601("2026-03-01 12:34:56.7891234"), Some(MAR_1_2026 + 45_296_789.0));
    assert_eq!(parse_iso8601("2026-03-01T12:34:56.7"), Some(MAR_1_2026 + 45_296_700.0));
    assert_eq!(parse_iso8601("2026-03-01T12:34Z"), Some(MAR_1_2026 + 45_240_000.0));
    // Offsets: 02:00 at +02:00 is midnight UTC; 23:30 at −00:30 too.
    assert_eq!(parse_iso8601("2026-03-01T02:00:00+02:00"), Some(MAR_1_2026));
    assert_eq!(parse_iso8601("2026-03-01T02:00:00+0200"), Some(MAR_1_2026));
    assert_eq!(parse_iso8601("2026-03-01T02:00:00+02"), Some(MAR_1_2026));
    assert_eq!(parse_iso8601("2026-02-28T23:30:00-00:30"), Some(MAR_1_2026));
    assert_eq!(parse_iso8601("1970-01-01T00:00:00Z"), Some(0.0));
    // A leap day: 2024-02-29 → 2025-03-01 is 366 days, → 2026-03-01 365 more.
    assert_eq!(parse_iso8601("2024-02-29T00:00:00Z"), Some(MAR_1_2026 - (366.0 + 365.0) * DAY));
  }

  #[test]
  fn iso_8601_rejects() {
    for text in [
      "",
      "2026",
      "2026-3-01",
      "2026-02-29",
      "2026-13-01",
      "2026-00-10",
      "2026-01-32",
      "2026-03-01T24:00:00Z",
      "2026-03-01T12:60:00Z",
      "2026-03-01T12:00:60Z",
      "2026-03-01T12:00:00.Z",
      "2026-03-01T12:00:00+2",
      "2026-03-01T12:00:00+24:00",
      "2026-03-01T12",
      "2026-03-01X12:00:00",
      "2026-03-01T12:00:00Zjunk",
      "yesterday",
      "2026-03-01T12:00:00 Z",
    ] {
      assert_eq!(parse_iso8601(text), None, "{text}");
    }
  }

  #[test]
  fn timestamps_as_text() {
    assert_eq!(parse_timestamp("1772323200000"), Ok(MAR_1_2026));
    assert_eq!(parse_timestamp("0"), Ok(0.0));
    assert!(parse_timestamp("1969-12-31T23:59:59Z").unwrap_err().contains("outside"));
    assert!(parse_timestamp("999999999999999999999").unwrap_err().contains("not epoch ms or ISO 8601"));
    assert_eq!(parse_timestamp("99999999999999"), Ok(99_999_999_999_999.0));
    assert_eq!(parse_timestamp("999999999"), Ok(999_999_999.0));
    assert_eq!(parse_timestamp("10000000000"), Ok(1e10));
  }

  #[test]
  fn epoch_seconds_micro_and_nanoseconds_are_named_not_read_as_ms() {
    // 2026-03-01T00:00:00Z is 1772323200 s (MAR_1_2026 / 1000): as ms it would be 21 Jan 1970.
    let hint = |unit: &str, advice: &str| {
      format!(
        "looks like epoch {unit} (2026-03-01T00:00:00Z if so); timestamps are epoch ms: {advice}, or write ISO 8601"
      )
    };
    assert_eq!(
      parse_timestamp("1772323200"),
      Err(format!("bad timestamp 1772323200: {}", hint("seconds", "multiply by 1000")))
    );
    assert_eq!(
      parse_timestamp("1772323200000000"),
      Err(format!("bad timestamp 1772323200000000: {}", hint("microseconds", "divide by 1000")))
    );
    assert_eq!(
      parse_timestamp("1772323200000000000"),
      Err(format!("bad timestamp 1772323200000000000: {}", hint("nanoseconds", "divide by 1000000")))
    );
    // The band's edges: 1e9 and 1e14 are refused, the numbers just below read as ms.
    assert!(parse_timestamp("1000000000").unwrap_err().contains("epoch seconds"));
    assert!(parse_timestamp("100000000000000").unwrap_err().contains("epoch microseconds"));
    assert!(parse_timestamp("9999999999999999999").unwrap_err().contains("epoch nanoseconds"));
    assert!(parse_timestamp("8640000000000001").unwrap_err().contains("epoch microseconds"));
    // JSON numbers the same, and an integer is quoted as written, not as its f64.
    let chunk = jsonl(concat!(
      "{\"ts\":1772323200,\"ok\":true}\n",
      "{\"ts\":1772323200000000,\"ok\":true}\n",
      "{\"ts\":9007199254740993,\"ok\":true}\n",
      "{\"ts\":1000,\"ok\":9007199254740993}\n",
      "{\"ts\":1772323200.5,\"ok\":true}\n",
      "{\"ts\":1772323200000,\"ok\":true}\n",
    ));
    let messages: Vec<_> = bad(&chunk).into_iter().map(|(n, m)| (n, m.split(':').next().unwrap().to_owned())).collect();
    assert_eq!(
      messages,
      vec![
        (1, "bad timestamp 1772323200".to_owned()),
        (2, "bad timestamp 1772323200000000".to_owned()),
        (3, "bad timestamp 9007199254740993".to_owned()),
        (4, "bad ok 9007199254740993".to_owned()),
        (5, "bad timestamp 1772323200.5".to_owned()),
      ]
    );
    assert!(chunk.bad_lines[0].message.contains("epoch seconds"));
    assert!(chunk.bad_lines[2].message.contains("epoch microseconds (2255-06-05T23:47:34Z if so)"));
    assert_eq!(chunk.ts, vec![MAR_1_2026]);
  }

  #[test]
  fn json_lines_events_types_and_extra_fields() {
    let chunk = jsonl(concat!(
      "{\"ts\":1000,\"ok\":true,\"type\":\"turnstile\",\"ms\":812}\n",
      "\n",
      "  {\"type\":\"image\",\"ok\":false,\"ts\":\"1970-01-01T00:00:02Z\",\"extra\":{\"a\":[1,{\"b\":null}]}}\r\n",
      "{\"ts\":3000.5,\"ok\":1,\"type\":\"turn\\u0073tile\"}\n",
      "{\"ts\":4000,\"ok\":\"false\"}",
    ));
    assert_eq!(bad(&chunk), vec![]);
    assert_eq!(chunk.ts, vec![1000.0, 2000.0, 3000.5, 4000.0]);
    assert_eq!(chunk.ok, vec![1, 0, 1, 0]);
    assert_eq!(chunk.types, vec!["turnstile", "image", ""]);
    assert_eq!(chunk.type_index, vec![0, 1, 0, 2]);
    assert_eq!(chunk.lines, 5);
  }

  #[test]
  fn json_lines_bad_lines_name_their_number_and_problem() {
    let chunk = jsonl(concat!(
      "{\"ts\":1000,\"ok\":true}\n",
      "{\"ts\":1000,\"ok\":true\n",
      "[1,2]\n",
      "{\"ok\":true}\n",
      "{\"ts\":1000}\n",
      "{\"ts\":\"soon\",\"ok\":true}\n",
      "{\"ts\":-1,\"ok\":true}\n",
      "{\"ts\":true,\"ok\":true}\n",
      "{\"ts\":1000,\"ok\":\"yes\"}\n",
      "{\"ts\":1000,\"ok\":true,\"type\":7}\n",
      "{\"ts\":1000,\"ok\":true} trailing\n",
      "{\"ts\":2000,\"ok\":false,\"type\":null}\n",
    ));
    assert_eq!(
      bad(&chunk),
      vec![
        (2, "invalid JSON at column 20: EOF while parsing an object"),
        (3, "not a JSON object"),
        (4, "missing field \"ts\""),
        (5, "missing field \"ok\""),
        (6, "bad timestamp \"soon\": not epoch ms or ISO 8601"),
        (7, "bad timestamp -1: outside 1970-01-01 … 275760-09-13 (0 … 8.64e15 epoch ms)"),
        (8, "bad timestamp true: not epoch ms or ISO 8601"),
        (9, "bad ok \"yes\": expected true, false, 1 or 0"),
        (10, "bad type 7: expected a string"),
        (11, "invalid JSON at column 23: trailing characters"),
      ]
    );
    assert_eq!(chunk.ts, vec![1000.0, 2000.0]);
    assert_eq!(chunk.types, vec![""]);
  }

  #[test]
  fn configured_field_names() {
    let fields = LogFields { ts: "time".into(), ok: "solved".into(), ty: "kind".into(), more: Vec::new() };
    let text = "{\"time\":5,\"solved\":false,\"kind\":\"image\",\"ts\":\"ignored\"}\n{\"ts\":5,\"ok\":true}\n";
    let chunk = parse_chunk(text.as_bytes(), &LogFormat::JsonLines(fields), 1, true);
    assert_eq!(bad(&chunk), vec![(2, "missing field \"time\"")]);
    assert_eq!((chunk.ts, chunk.ok, chunk.types), (vec![5.0], vec![0], vec!["image".to_owned()]));
  }

  #[test]
  fn an_unfinished_line_waits_for_the_next_chunk() {
    let text = b"{\"ts\":1,\"ok\":true}\n{\"ts\":2,\"ok\":tr";
    let format = LogFormat::JsonLines(LogFields::default());
    let chunk = parse_chunk(text, &format, 10, false);
    assert_eq!((chunk.ts.len(), chunk.lines, chunk.consumed), (1, 1, 19));
    let rest = parse_chunk(b"{\"ts\":2,\"ok\":true}", &format, 11, false);
    assert_eq!((rest.ts.len(), rest.lines, rest.consumed), (0, 0, 0));
    let rest = parse_chunk(b"{\"ts\":2,\"ok\":true}", &format, 11, true);
    assert_eq!((rest.ts, rest.lines, rest.consumed), (vec![2.0], 1, 18));
  }

  #[test]
  fn csv_lines_with_quotes_and_blanks() {
    let chunk = csv(
      concat!(
        "1000,true,turnstile\n",
        "\"1970-01-01T00:00:02Z\", FALSE ,\"image, v2\"\n",
        "3000,1,\n",
        "4000,0\n",
        "\n",
        "5000,maybe,image\n",
        ",true,image\n",
        "6000\n",
        "junk,true,image\n",
        "7000,\"t\"\"rue\",image\n",
      ),
      Some(2),
    );
    assert_eq!(chunk.ts, vec![1000.0, 2000.0, 3000.0, 4000.0]);
    assert_eq!(chunk.ok, vec![1, 0, 1, 0]);
    assert_eq!(chunk.types, vec!["turnstile", "image, v2", ""]);
    assert_eq!(chunk.type_index, vec![0, 1, 2, 2]);
    assert_eq!(
      bad(&chunk),
      vec![
        (7, "bad ok \"maybe\": expected true, false, 1 or 0"),
        (8, "missing field \"ts\""),
        (9, "missing field \"ok\""),
        (10, "bad timestamp \"junk\": not epoch ms or ISO 8601"),
        (11, "bad ok \"t\\\"rue\": expected true, false, 1 or 0"),
      ]
    );
  }

  #[test]
  fn a_line_over_the_maximum_is_one_bad_line() {
    let long = format!("{{\"ts\":1000,\"ok\":true,\"pad\":\"{}\"}}", "x".repeat(MAX_LINE_BYTES));
    let just = format!("{{\"ts\":2000,\"ok\":true,\"pad\":\"{}\"}}", "x".repeat(MAX_LINE_BYTES - 30));
    assert_eq!(just.len(), MAX_LINE_BYTES);
    let chunk = jsonl(&format!("{long}\n{just}\r\n{{\"ts\":3000,\"ok\":false}}\n"));
    let message =
      format!("line too long: {} bytes, over the 1 MiB (1048576 bytes) a line may hold", MAX_LINE_BYTES + 30);
    assert_eq!(bad(&chunk), vec![(1, message.as_str())]);
    assert_eq!((chunk.ts, chunk.lines), (vec![2000.0, 3000.0], 3));
  }

  #[test]
  fn a_timestamp_far_after_the_latest_before_it_is_a_bad_line() {
    // 2027-03-02 is 366 days after 2026-03-01 (2026 is no leap year, 2027-02 neither): the
    // limit, kept; a day later is refused; 2062 (a typo for 2026) too, across chunks.
    let format = LogFormat::JsonLines(LogFields::default());
    let text = concat!(
      "{\"ts\":\"2026-03-01\",\"ok\":true}\n",
      "{\"ts\":\"2062-03-01\",\"ok\":false}\n",
      "{\"ts\":\"2026-03-01T00:00:01Z\",\"ok\":true}\n",
    );
    let chunk = parse_chunk(text.as_bytes(), &format, 1, true);
    assert_eq!(
      bad(&chunk),
      vec![(
        2,
        "bad timestamp 2062-03-01T00:00:00Z: 13149 days after the latest before it (2026-03-01T00:00:00Z), far outside \
         the log's range (at most 366 days ahead)"
      )]
    );
    assert_eq!((chunk.ts, chunk.latest_ms), (vec![MAR_1_2026, MAR_1_2026 + 1000.0], MAR_1_2026 + 1000.0));
    let next =
      parse_chunk_after(b"{\"ts\":\"2027-03-02T00:00:01Z\",\"ok\":true}\n", &format, 4, true, MAR_1_2026 + 1000.0);
    assert_eq!(next.ts, vec![MAR_1_2026 + 366.0 * DAY + 1000.0]);
    let late =
      parse_chunk_after(b"{\"ts\":\"2027-03-02T00:00:01.001Z\",\"ok\":true}\n", &format, 4, true, MAR_1_2026 + 1000.0);
    assert_eq!((late.ts.len(), late.bad_lines.len()), (0, 1));
    assert_eq!(late.latest_ms, MAR_1_2026 + 1000.0);
    // Earlier timestamps are no jump: they are the window's to drop as old.
    let early = parse_chunk_after(b"{\"ts\":0,\"ok\":true}\n", &format, 4, true, MAR_1_2026);
    assert_eq!((early.ts, early.latest_ms), (vec![0.0], MAR_1_2026));
  }

  #[test]
  fn csv_without_a_type_column() {
    let chunk = csv("1000,true\n2000,false,extra\n", None);
    assert_eq!((chunk.ok, chunk.types), (vec![1, 0], vec![String::new()]));
  }

  #[test]
  fn grouping_fields_join_into_one_type() {
    let fields = LogFields { more: vec!["site".into(), "provider".into()], ..LogFields::default() };
    let log = concat!(
      "{\"ts\":1,\"ok\":true,\"site\":\"a.example\",\"type\":\"turnstile\",\"provider\":\"p\"}\n",
      "{\"ts\":2,\"ok\":false,\"type\":\"image\"}\n",
      "{\"ts\":3,\"ok\":true,\"type\":\"turnstile\",\"site\":7}\n",
      "{\"ts\":4,\"ok\":true,\"type\":\"turnstile\",\"site\":\"a.example\",\"provider\":\"p\"}\n",
    );
    let chunk = parse_chunk(log.as_bytes(), &LogFormat::JsonLines(fields.clone()), 1, true);
    assert_eq!(chunk.types, vec!["turnstile\u{1f}a.example\u{1f}p", "image\u{1f}\u{1f}"]);
    assert_eq!(chunk.type_index, vec![0, 1, 0]);
    assert_eq!(chunk.bad_lines, vec![BadLine { line: 3, message: "bad site 7: expected a string".into() }]);
    let csv = "1,1,turnstile,a.example\n2,0,image,\n3,1,,b\n";
    let format = LogFormat::Csv { fields, ts: 0, ok: 1, ty: Some(2), more: vec![Some(3), None] };
    let chunk = parse_chunk(csv.as_bytes(), &format, 1, true);
    assert_eq!(chunk.types, vec!["turnstile\u{1f}a.example\u{1f}", "image\u{1f}\u{1f}", "\u{1f}b\u{1f}"]);
    assert!(chunk.bad_lines.is_empty());
  }
}

//! The wire trace of one case: every message hcpspec sent to the implementation and every one it
//! received, in order, as a person reads it when a case did not pass (`--trace`, `explain`,
//! result.json's `trace`, the HTML report). Like Connect's `--trace` and Autobahn's wire logs.
//!
//! The runner starts a recording on each case's thread ([`begin`]); the adapters write each
//! frame to the recording of the thread they run on ([`sent`], [`received`], [`note`]), or to a
//! [`Handle`] taken on it for work on other threads. A recording is bounded as it is made (at
//! most [`MAX_MESSAGES`] messages and [`MAX_BYTES`] of text, each message cut at
//! [`MAX_MESSAGE`]): the first half of the budget keeps the first messages, the second half the
//! latest, and those in between are counted as left out. It is contained when it ends as every
//! text from an implementation is: secrets redacted, then cut (`snapshot`); the runner applies
//! the runtime's declared redactions on top. Times are for reading only: no verdict reads them.

use crate::snapshot::{contain_text, redact_secrets, secrets, MAX_TEXT};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// At most this many messages of one case are kept.
pub const MAX_MESSAGES: usize = 200;
/// At most this much text of one case's messages is kept, in bytes (32 KiB).
pub const MAX_BYTES: usize = 32 << 10;
/// Each message is cut at this many bytes (after redaction), as every text is (4 KiB).
pub const MAX_MESSAGE: usize = MAX_TEXT;
/// What is read of a frame past [`MAX_MESSAGE`] before it is redacted and cut: a secret
/// starting before the cut is found whole (a flood of megabytes is never scanned).
const MARGIN: usize = 64 << 10;

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// From hcpspec to the implementation.
    Sent,
    /// From the implementation to hcpspec.
    Received,
    /// What hcpspec did instead of a message (a pooled shim's `initialize` answer reused).
    Note,
}

impl Dir {
    /// The arrow a rendering puts before the message.
    pub fn arrow(self) -> &'static str {
        match self {
            Dir::Sent => "→",
            Dir::Received => "←",
            Dir::Note => "·",
        }
    }
}

/// One message of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub dir: Dir,
    /// The JSON-RPC method of the request (an answer carries its request's), or what it is.
    pub method: String,
    /// The frame as it went over the wire: redacted, cut at [`MAX_MESSAGE`].
    pub text: String,
    /// Milliseconds since the case began, for reading only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

/// The messages of one case, bounded; `left_out` were left out after the first
/// `left_out_after` of `messages`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out_after: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Trace {
    /// Contain every text again with `redact` applied first (the runtime's declared
    /// redactions), and hold the bounds: for a trace read from a file, which may have been
    /// edited. Containing twice is containing once.
    pub fn contain(&mut self, redact: &dyn Fn(&str) -> String) {
        let mut bytes = 0;
        let mut kept = Vec::new();
        for m in std::mem::take(&mut self.messages) {
            let text = contain_text(&redact_wire(&redact(&m.text)));
            let method = contain_text(&m.method).chars().take(200).collect();
            // Twice the budget: a live trace is within it (each message's cut marker and
            // redactions aside), so only a file edited by hand loses messages here.
            if kept.len() >= MAX_MESSAGES || bytes + text.len() > 2 * MAX_BYTES {
                self.left_out += 1;
                continue;
            }
            bytes += text.len();
            kept.push(Message { method, text, ..m });
        }
        self.left_out_after = self.left_out_after.min(kept.len());
        self.messages = kept;
    }

    /// The line that stands for the messages left out.
    pub fn gap(&self) -> Option<String> {
        (self.left_out > 0).then(|| format!("… {} messages left out", self.left_out))
    }

    /// Each line of the trace for a terminal or a text report: `+12 ms → method  {...}`, the
    /// gap where it is.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, m) in self.messages.iter().enumerate() {
            if i == self.left_out_after {
                out.extend(self.gap());
            }
            let at = m.ms.map(|ms| format!("+{ms} ms ")).unwrap_or_default();
            out.push(format!("{at}{} {}  {}", m.dir.arrow(), m.method, m.text));
        }
        if self.left_out_after >= self.messages.len() {
            out.extend(self.gap());
        }
        out
    }
}

/// The values of hcpspec's environment as a frame may carry them: as they are, and escaped
/// once, twice and three times into JSON strings (a frame is JSON, and a shim's text often
/// quotes JSON: an error message holding a JSON-encoded value holding the secret). An
/// observation is a parsed frame, so it holds one level fewer; `redact_secrets` finds each of
/// these and its own escaped form.
fn wire_secrets() -> &'static [(String, String)] {
    static S: OnceLock<Vec<(String, String)>> = OnceLock::new();
    S.get_or_init(|| escaped(secrets()))
}

/// `secrets` and their forms escaped into JSON strings up to three times, longest first.
fn escaped(secrets: &[(String, String)]) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for (name, value) in secrets {
        let mut v = value.clone();
        all.push((name.clone(), v.clone()));
        for _ in 0..3 {
            let quoted = serde_json::to_string(&v).unwrap_or_default();
            let inner = quoted[1..quoted.len().saturating_sub(1).max(1)].to_string();
            if inner == v {
                break;
            }
            v = inner;
            all.push((name.clone(), v.clone()));
        }
    }
    all.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    all
}

/// A frame redacted: its text, or when that hides a secret behind JSON's `\\uXXXX` escapes
/// (`\\u0063anary…`, which a parsed observation reads as `canary…`), the text with those
/// escapes decoded, redacted.
fn redact_wire(frame: &str) -> String {
    redact_wire_with(frame, wire_secrets())
}

fn redact_wire_with(frame: &str, secrets: &[(String, String)]) -> String {
    let plain = redact_secrets(frame, secrets);
    if frame.contains("\\u") {
        if let std::borrow::Cow::Owned(r) = redact_secrets(&decode_u(frame), secrets) {
            return r;
        }
    }
    plain.into_owned()
}

/// `s` with every `\\uXXXX` escape (and surrogate pair) as the character it stands for; a lone
/// surrogate is U+FFFD.
fn decode_u(s: &str) -> String {
    let hex = |t: &str| {
        t.get(..4)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(hi) = hex(after) else {
            out.push_str("\\u");
            rest = after;
            continue;
        };
        let mut used = 4;
        let c = if (0xD800..0xDC00).contains(&hi) {
            match after[4..].strip_prefix("\\u").and_then(hex) {
                Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                    used = 10;
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                }
                _ => None,
            }
        } else {
            char::from_u32(hi)
        };
        out.push(c.unwrap_or('\u{fffd}'));
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// A message as recorded: a redaction's worth past the cut of the frame, and its whole length.
struct Raw {
    dir: Dir,
    method: String,
    head: String,
    len: usize,
    ms: u64,
}

impl Raw {
    fn size(&self) -> usize {
        self.len.min(MAX_MESSAGE)
    }

    /// Redacted, then cut at [`MAX_MESSAGE`] and marked with the frame's whole length.
    fn contain(self) -> Message {
        let redacted = redact_wire(&self.head);
        let text = if redacted.len() > MAX_MESSAGE || self.len > self.head.len() {
            let mut end = MAX_MESSAGE.min(redacted.len());
            while !redacted.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}…[cut: {} bytes in all]", &redacted[..end], self.len)
        } else {
            redacted
        };
        Message {
            dir: self.dir,
            method: contain_text(&self.method),
            text,
            ms: Some(self.ms),
        }
    }
}

struct Recorder {
    start: Instant,
    head: Vec<Raw>,
    head_bytes: usize,
    /// Set once a message did not fit the head: every later one goes to the tail.
    head_full: bool,
    tail: VecDeque<Raw>,
    tail_bytes: usize,
    left_out: usize,
}

impl Recorder {
    fn push(&mut self, raw: Raw) {
        let size = raw.size();
        if !self.head_full
            && self.head.len() < MAX_MESSAGES / 2
            && self.head_bytes + size <= MAX_BYTES / 2
        {
            self.head_bytes += size;
            self.head.push(raw);
            return;
        }
        self.head_full = true;
        self.tail_bytes += size;
        self.tail.push_back(raw);
        while self.tail.len() > MAX_MESSAGES / 2 || self.tail_bytes > MAX_BYTES / 2 {
            let Some(old) = self.tail.pop_front() else {
                break;
            };
            self.tail_bytes -= old.size();
            self.left_out += 1;
        }
    }
}

/// A recording, shared by the threads of one case.
#[derive(Clone)]
pub struct Handle(Arc<Mutex<Recorder>>);

thread_local! {
    static CURRENT: RefCell<Option<Handle>> = const { RefCell::new(None) };
}

/// Start recording the messages of the case that runs on this thread.
pub fn begin() -> Handle {
    let h = Handle(Arc::new(Mutex::new(Recorder {
        start: Instant::now(),
        head: Vec::new(),
        head_bytes: 0,
        head_full: false,
        tail: VecDeque::new(),
        tail_bytes: 0,
        left_out: 0,
    })));
    CURRENT.with(|c| *c.borrow_mut() = Some(h.clone()));
    h
}

/// The recording of this thread's case, to hand to a thread that works for it.
pub fn current() -> Option<Handle> {
    CURRENT.with(|c| c.borrow().clone())
}

/// A frame hcpspec sent, into this thread's recording (if any).
pub fn sent(method: &str, frame: &[u8]) {
    if let Some(h) = current() {
        h.sent(method, frame);
    }
}

/// A frame hcpspec sent of `len` bytes, of which `start` is the beginning (at least what the
/// recording keeps of it), into this thread's recording (if any): a frame of many MiB is never
/// made whole for it.
pub fn sent_start(method: &str, start: &[u8], len: usize) {
    if let Some(h) = current() {
        h.record_with(Dir::Sent, method, start, len, None);
    }
}

/// A frame hcpspec received, into this thread's recording (if any).
pub fn received(method: &str, frame: &[u8]) {
    if let Some(h) = current() {
        h.received(method, frame);
    }
}

/// A message logged elsewhere as a parsed value (a scenario's log, with its own time), into
/// this thread's recording (if any). Only what is kept of it is written out: a frame of many
/// MiB is never copied whole.
pub fn record_value(dir: Dir, method: &str, value: &serde_json::Value, ms: Option<u64>) {
    struct Upto {
        kept: Vec<u8>,
        len: usize,
    }
    impl std::fmt::Write for Upto {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let b = s.as_bytes();
            let room = (MAX_MESSAGE + MARGIN).saturating_sub(self.kept.len());
            self.kept.extend_from_slice(&b[..b.len().min(room)]);
            self.len += b.len();
            Ok(())
        }
    }
    if let Some(h) = current() {
        let mut w = Upto {
            kept: Vec::new(),
            len: 0,
        };
        // Through `Value`'s Display (the same compact JSON), not `to_writer` for this writer:
        // that escaping would be compiled here, unoptimized in a debug build, and escaping a
        // flood's 256 MiB took seconds of CPU a case (most of a `cargo test` flood test).
        let _ = std::fmt::Write::write_fmt(&mut w, format_args!("{value}"));
        h.record_with(dir, method, &w.kept, w.len, ms);
    }
}

/// What hcpspec did instead of a message, into this thread's recording (if any).
pub fn note(method: &str, text: &str) {
    if let Some(h) = current() {
        h.record(Dir::Note, method, text.as_bytes());
    }
}

impl Handle {
    pub fn sent(&self, method: &str, frame: &[u8]) {
        self.record(Dir::Sent, method, frame);
    }

    pub fn received(&self, method: &str, frame: &[u8]) {
        self.record(Dir::Received, method, frame);
    }

    fn record(&self, dir: Dir, method: &str, frame: &[u8]) {
        let frame = frame.strip_suffix(b"\n").unwrap_or(frame);
        self.record_with(dir, method, frame, frame.len(), None);
    }

    /// `frame` (or its start), of `len` bytes in all.
    fn record_with(&self, dir: Dir, method: &str, frame: &[u8], len: usize, at: Option<u64>) {
        let head = String::from_utf8_lossy(&frame[..frame.len().min(MAX_MESSAGE + MARGIN)]);
        let mut r = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let raw = Raw {
            dir,
            method: method.chars().take(200).collect(),
            head: head.into_owned(),
            len: len.max(frame.len()),
            ms: at.unwrap_or_else(|| r.start.elapsed().as_millis() as u64),
        };
        r.push(raw);
    }

    /// End the recording: the messages kept, contained; None when nothing was exchanged. This
    /// thread records nothing more.
    pub fn finish(self) -> Option<Trace> {
        CURRENT.with(|c| *c.borrow_mut() = None);
        let mut r = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let head: Vec<Raw> = std::mem::take(&mut r.head);
        let tail: Vec<Raw> = std::mem::take(&mut r.tail).into();
        if head.is_empty() && tail.is_empty() {
            return None;
        }
        let left_out_after = head.len();
        let messages = head.into_iter().chain(tail).map(Raw::contain).collect();
        Some(Trace {
            messages,
            left_out: r.left_out,
            left_out_after: if r.left_out > 0 { left_out_after } else { 0 },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_keeps_the_first_and_the_latest_messages_within_the_bounds() {
        let h = begin();
        for i in 0..1000 {
            sent("m", format!("{{\"n\":{i}}}").as_bytes());
        }
        received("m", &vec![b'x'; 1 << 20]);
        let t = h.finish().unwrap();
        assert!(t.messages.len() <= MAX_MESSAGES);
        let bytes: usize = t.messages.iter().map(|m| m.text.len()).sum();
        assert!(bytes <= MAX_BYTES + 200, "{bytes}");
        assert_eq!(t.messages[0].text, "{\"n\":0}");
        let last = t.messages.last().unwrap();
        assert!(
            last.text.ends_with("…[cut: 1048576 bytes in all]"),
            "{}",
            last.text
        );
        assert_eq!(t.messages.len() + t.left_out, 1001);
        assert!(t
            .lines()
            .iter()
            .any(|l| l.starts_with("… ") && l.ends_with("messages left out")));
        // Containing again changes nothing.
        let mut again = t.clone();
        again.contain(&|s| s.to_string());
        assert_eq!(again, t);
    }

    /// A logged value is recorded as its compact JSON: its head, and its length in all (a big
    /// frame with characters JSON escapes, counted as escaped).
    #[test]
    fn a_logged_value_is_recorded_as_its_json() {
        let value = serde_json::json!({ "t": "msg", "m": "log",
            "p": { "pad": format!("\"\\\n\u{1}é{}", "A".repeat(MAX_MESSAGE + MARGIN)), "n": [1, 2.5, null] } });
        let json = serde_json::to_string(&value).unwrap();
        let h = begin();
        record_value(Dir::Received, "ws log", &value, Some(7));
        let r = h.0.lock().unwrap();
        assert_eq!(r.head[0].len, json.len());
        assert_eq!(
            r.head[0].head.as_bytes(),
            &json.as_bytes()[..MAX_MESSAGE + MARGIN]
        );
    }

    /// A secret holding `"` and `\\` inside a JSON string inside a frame (escaped twice) is
    /// found, as the observation (the parsed frame, escaped once) finds it.
    #[test]
    fn a_secret_escaped_into_json_twice_is_redacted() {
        let value = "canary\"q\\uote-1a2b3c4d";
        let secrets = vec![("HCPSPEC_X".to_string(), value.to_string())];
        let once = serde_json::to_string(value).unwrap();
        let twice = serde_json::to_string(&format!("said: {once}")).unwrap();
        let frame = format!("{{\"message\": {twice}}}");
        assert!(redact_secrets(&frame, &secrets).contains("uote-1a2b3c4d"));
        let redacted = redact_secrets(&frame, &escaped(&secrets));
        assert!(!redacted.contains("uote-1a2b3c4d"), "{redacted}");
        assert!(redacted.contains("[redacted: $HCPSPEC_X]"), "{redacted}");
    }

    /// A secret spelled with JSON's `\\u` escapes in a frame is found, as the parsed
    /// observation finds it.
    #[test]
    fn a_secret_behind_unicode_escapes_is_redacted() {
        assert_eq!(
            decode_u(r"a\u0063b\ud83d\ude00\ud800x\u12"),
            "acb\u{1f600}\u{fffd}x\\u12"
        );
        let secrets = vec![("HCPSPEC_X".to_string(), "canary-1a2b3c4d".to_string())];
        let escaped: String = "canary"
            .chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect();
        let frame = format!("{{\"message\": \"{escaped}-1a2b3c4d\"}}");
        assert!(redact_secrets(&frame, &secrets).contains("1a2b3c4d"));
        let redacted = redact_wire_with(&frame, &secrets);
        assert_eq!(redacted, "{\"message\": \"[redacted: $HCPSPEC_X]\"}");
    }

    #[test]
    fn nothing_exchanged_is_no_trace() {
        assert!(begin().finish().is_none());
        sent("m", b"{}"); // no recording on this thread any more
    }
}

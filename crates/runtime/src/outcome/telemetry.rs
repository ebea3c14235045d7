//! Weak-success telemetry: observational flags recorded beside an outcome, and links between a
//! call and the earlier call it corrects. Nothing here can change an outcome: every function
//! takes the outcome by shared reference and returns a separate record.
//!
//! The flags (all require an ok outcome; they read the value, never the envelope):
//! * `weak_status`: the value is an object whose `status` string, trimmed and ASCII-lowercased,
//!   is one of [`WEAK_STATUSES`] (the reference's legacy weak statuses);
//! * `empty_array_success`: the value is `[]`, or an object with at least one top-level member
//!   that is `[]` while its `status` (if any) is success-like ([`SUCCESS_STATUSES`]) or absent;
//! * `success_nothing_parsed`: the value carries nothing: `null`, `{}`, a blank string, or an
//!   object whose members are all prose or status keys ([`PROSE_KEYS`]) — guidance instead of
//!   the items asked for.
//!
//! A correction is the same tool and method asked again in the same trace within a window
//! (default [`DEFAULT_CORRECTION_WINDOW_MS`], the reference's 180 s); calls nested below the top
//! level are not linked. Arguments and outcomes are not compared.

use std::collections::HashMap;

use serde_json::Value;

use super::shape::pointer_child;
use super::types::Outcome;

/// Status strings that signal weak success (outcomes.md §B10).
pub const WEAK_STATUSES: &[&str] = &[
    "success_no_parse",
    "success_but_unusable",
    "partial_success_unusable",
    "empty_result",
    "no_useful_result",
    "low_utility",
];

/// Status strings that claim success.
pub const SUCCESS_STATUSES: &[&str] = &["ok", "success", "succeeded", "done", "complete", "completed", "found"];

/// Members that carry prose or status rather than delivered data.
pub const PROSE_KEYS: &[&str] = &[
    "status",
    "message",
    "messages",
    "note",
    "notes",
    "guidance",
    "hint",
    "hints",
    "explanation",
    "reason",
    "summary",
];

/// The reference's re-ask window: 180 seconds.
pub const DEFAULT_CORRECTION_WINDOW_MS: u64 = 180_000;

/// One observational flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WeakSuccessFlag {
    WeakStatus,
    EmptyArraySuccess,
    SuccessNothingParsed,
}

impl WeakSuccessFlag {
    pub const ALL: [WeakSuccessFlag; 3] =
        [WeakSuccessFlag::WeakStatus, WeakSuccessFlag::EmptyArraySuccess, WeakSuccessFlag::SuccessNothingParsed];

    pub fn as_str(self) -> &'static str {
        match self {
            WeakSuccessFlag::WeakStatus => "weak_status",
            WeakSuccessFlag::EmptyArraySuccess => "empty_array_success",
            WeakSuccessFlag::SuccessNothingParsed => "success_nothing_parsed",
        }
    }

    pub fn from_name(name: &str) -> Option<WeakSuccessFlag> {
        WeakSuccessFlag::ALL.into_iter().find(|flag| flag.as_str() == name)
    }
}

/// What was observed about one outcome.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WeakSuccess {
    /// Flags in the fixed order of [`WeakSuccessFlag::ALL`]; empty when the success looks sound.
    pub flags: Vec<WeakSuccessFlag>,
    /// JSON pointers of the empty arrays behind `empty_array_success`.
    pub empty_arrays: Vec<String>,
    /// The value's `status` string, when it has one.
    pub status: Option<String>,
}

impl WeakSuccess {
    pub fn is_weak(&self) -> bool {
        !self.flags.is_empty()
    }
}

fn normalized_status(status: &str) -> String {
    status.trim().to_ascii_lowercase()
}

/// Observe an outcome. Error outcomes are never weak successes.
pub fn observe(outcome: &Outcome) -> WeakSuccess {
    let Some(value) = outcome.value() else { return WeakSuccess::default() };
    let mut observed = WeakSuccess::default();
    let status = value.get("status").and_then(Value::as_str);
    observed.status = status.map(str::to_owned);
    let normalized = status.map(normalized_status);
    if normalized.as_deref().is_some_and(|status| WEAK_STATUSES.contains(&status)) {
        observed.flags.push(WeakSuccessFlag::WeakStatus);
    }
    let success_like = normalized.as_deref().is_none_or(|status| SUCCESS_STATUSES.contains(&status));
    match value {
        Value::Array(items) if items.is_empty() => observed.empty_arrays.push(String::new()),
        Value::Object(members) if success_like => {
            for (key, member) in members {
                if member.as_array().is_some_and(Vec::is_empty) {
                    observed.empty_arrays.push(pointer_child("", key));
                }
            }
        }
        _ => {}
    }
    if !observed.empty_arrays.is_empty() {
        observed.flags.push(WeakSuccessFlag::EmptyArraySuccess);
    }
    let nothing = match value {
        Value::Null => true,
        Value::String(text) => text.trim().is_empty(),
        Value::Object(members) => members.keys().all(|key| PROSE_KEYS.contains(&key.as_str())),
        _ => false,
    };
    if nothing {
        observed.flags.push(WeakSuccessFlag::SuccessNothingParsed);
    }
    observed
}

/// Who a call is, for correction linking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRef {
    /// The call's id when known.
    pub call_id: Option<String>,
    /// Where the call was recorded (a log line number, or any caller-chosen sequence).
    pub sequence: usize,
    /// Whether that call's outcome was a weak success.
    pub weak_success: bool,
}

/// Links each call to the earlier call it corrects: same trace, same tool and method, top
/// level, within the window. Memory grows with the number of distinct (trace, tool, method).
#[derive(Debug)]
pub struct CorrectionLinker {
    window_ms: u64,
    last: HashMap<(String, String, String), (u64, CallRef)>,
}

impl Default for CorrectionLinker {
    fn default() -> Self {
        CorrectionLinker::new(DEFAULT_CORRECTION_WINDOW_MS)
    }
}

/// One call as the linker sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallSighting<'a> {
    pub trace_id: Option<&'a str>,
    pub tool: &'a str,
    pub method: &'a str,
    /// Milliseconds since the epoch.
    pub at_ms: Option<u64>,
    /// Nesting depth; `None` counts as top level.
    pub depth: Option<u64>,
}

impl CorrectionLinker {
    pub fn new(window_ms: u64) -> CorrectionLinker {
        CorrectionLinker { window_ms, last: HashMap::new() }
    }

    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }

    /// Record a call; returns the earlier call it corrects, if any.
    pub fn sight(&mut self, call: CallSighting<'_>, this: CallRef) -> Option<CallRef> {
        let trace = call.trace_id.filter(|trace| !trace.is_empty())?;
        let at_ms = call.at_ms?;
        if call.depth.is_some_and(|depth| depth > 0) {
            return None;
        }
        let key = (trace.to_owned(), call.tool.to_owned(), call.method.to_owned());
        let previous = self.last.insert(key, (at_ms, this))?;
        let (previous_at, previous_call) = previous;
        let elapsed = at_ms.checked_sub(previous_at)?;
        (elapsed <= self.window_ms).then_some(previous_call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flags(value: Value) -> Vec<&'static str> {
        observe(&Outcome::ok(value)).flags.into_iter().map(WeakSuccessFlag::as_str).collect()
    }

    #[test]
    fn weak_status_is_flagged_but_sound_status_is_not() {
        assert_eq!(flags(json!({"status":"success_no_parse","movies":[{"t":1}]})), ["weak_status"]);
        assert_eq!(flags(json!({"status":" Empty_Result ","movies":[{"t":1}]})), ["weak_status"]);
        assert!(flags(json!({"status":"success","movies":[{"t":1}]})).is_empty());
    }

    #[test]
    fn empty_array_under_success_like_status() {
        assert_eq!(flags(json!({"status":"success","movies":[],"source":"x"})), ["empty_array_success"]);
        assert_eq!(flags(json!({"movies":[],"source":"x"})), ["empty_array_success"]);
        assert_eq!(flags(json!([])), ["empty_array_success"]);
        // A status that is neither success-like nor weak does not claim success.
        assert!(flags(json!({"status":"partial","movies":[],"source":"x"})).is_empty());
        let observed = observe(&Outcome::ok(json!({"a/b":[],"c":[1]})));
        assert_eq!(observed.empty_arrays, ["/a~1b"]);
    }

    #[test]
    fn nothing_parsed() {
        assert_eq!(flags(json!({"status":"ok","message":"try another site"})), ["success_nothing_parsed"]);
        assert_eq!(flags(json!(null)), ["success_nothing_parsed"]);
        assert_eq!(flags(json!("  ")), ["success_nothing_parsed"]);
        assert!(flags(json!({"message":"x","items":[1]})).is_empty());
        assert!(flags(json!(0)).is_empty());
    }

    #[test]
    fn errors_are_never_weak_successes() {
        let outcome = Outcome::from_json(&json!({"status":"error","error_type":"low_utility"})).unwrap();
        assert!(!observe(&outcome).is_weak());
    }

    fn sighting<'a>(trace: &'a str, method: &'a str, at_ms: u64) -> CallSighting<'a> {
        CallSighting { trace_id: Some(trace), tool: "t", method, at_ms: Some(at_ms), depth: None }
    }

    fn call(sequence: usize) -> CallRef {
        CallRef { call_id: None, sequence, weak_success: false }
    }

    #[test]
    fn corrections_link_within_the_window_in_the_same_trace() {
        let mut linker = CorrectionLinker::default();
        assert_eq!(linker.sight(sighting("a", "m", 1_000), call(1)), None);
        assert_eq!(linker.sight(sighting("a", "m", 181_000), call(2)).map(|c| c.sequence), Some(1), "180 s inclusive");
        assert_eq!(linker.sight(sighting("a", "m", 361_001), call(3)), None, "outside the window");
        assert_eq!(linker.sight(sighting("b", "m", 361_002), call(4)), None, "another trace");
        assert_eq!(linker.sight(sighting("a", "other", 361_003), call(5)), None, "another method");
        let nested = CallSighting { depth: Some(1), ..sighting("a", "m", 361_004) };
        assert_eq!(linker.sight(nested, call(6)), None, "nested calls are not corrections");
        let untraced = CallSighting { trace_id: None, ..sighting("a", "m", 361_005) };
        assert_eq!(linker.sight(untraced, call(7)), None);
    }
}

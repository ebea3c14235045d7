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

use std::borrow::Cow;
use std::collections::HashMap;

use foldhash::fast::RandomState;
use serde_json::Value;

use super::shape::push_pointer_child;
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

/// One observational flag (see the module documentation for exactly when each is raised).
/// Flags never change an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum WeakSuccessFlag {
    /// `weak_status`: the value's `status` is one of [`WEAK_STATUSES`].
    WeakStatus,
    /// `empty_array_success`: an empty array where a success claims to deliver.
    EmptyArraySuccess,
    /// `success_nothing_parsed`: the value carries nothing but prose or status.
    SuccessNothingParsed,
}

impl WeakSuccessFlag {
    /// Every flag, in the fixed order flags are recorded and reported.
    pub const ALL: [WeakSuccessFlag; 3] =
        [WeakSuccessFlag::WeakStatus, WeakSuccessFlag::EmptyArraySuccess, WeakSuccessFlag::SuccessNothingParsed];

    /// The snake-case name recorded in outcome events (e.g. `empty_array_success`).
    pub fn as_str(self) -> &'static str {
        match self {
            WeakSuccessFlag::WeakStatus => "weak_status",
            WeakSuccessFlag::EmptyArraySuccess => "empty_array_success",
            WeakSuccessFlag::SuccessNothingParsed => "success_nothing_parsed",
        }
    }

    /// The flag of a recorded name (exact match); `None` for any other string.
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
    /// The trimmed `status` string behind `weak_status`.
    pub status: Option<String>,
}

impl WeakSuccess {
    /// Whether any flag was raised.
    pub fn is_weak(&self) -> bool {
        !self.flags.is_empty()
    }
}

/// Whether a trimmed status is in a list, ignoring ASCII case (telemetry only).
fn is_listed(status: &str, list: &[&str]) -> bool {
    list.iter().any(|listed| listed.eq_ignore_ascii_case(status))
}

/// Observe an outcome. Error outcomes are never weak successes.
pub fn observe(outcome: &Outcome) -> WeakSuccess {
    match outcome.value() {
        Some(value) => observe_summary(&ValueSummary::of(value)),
        None => WeakSuccess::default(),
    }
}

/// Observe the ok value of an outcome from its summary.
pub(crate) fn observe_summary(summary: &ValueSummary<'_>) -> WeakSuccess {
    let observed = Observed::of(summary);
    let mut empty_arrays = Vec::new();
    observed.for_each_empty_array(&mut String::new(), |pointer| empty_arrays.push(pointer.to_owned()));
    WeakSuccess { flags: observed.flags().collect(), empty_arrays, status: observed.weak_status.map(str::to_owned) }
}

/// The members that are empty arrays behind `empty_array_success`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EmptyArrays<'s> {
    None,
    /// The value itself is `[]` (the pointer `""`).
    Root,
    /// These top-level members (keys, not yet pointers).
    Members(&'s [Cow<'s, str>]),
}

/// What [`observe_summary`] finds, borrowed from the summary: the report reads a million of
/// these, so nothing is copied until it is kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Observed<'s> {
    /// The trimmed `status` string behind `weak_status`.
    pub weak_status: Option<&'s str>,
    pub empty_arrays: EmptyArrays<'s>,
    pub nothing_parsed: bool,
}

impl<'s> Observed<'s> {
    pub fn of(summary: &'s ValueSummary<'s>) -> Observed<'s> {
        let status = match summary {
            ValueSummary::Object { status, .. } => status.as_deref().map(str::trim),
            _ => None,
        };
        let weak_status = status.filter(|status| is_listed(status, WEAK_STATUSES));
        let success_like = status.is_none_or(|status| is_listed(status, SUCCESS_STATUSES));
        let empty_arrays = match summary {
            ValueSummary::Array { empty: true } => EmptyArrays::Root,
            ValueSummary::Object { empty_arrays, .. } if success_like && !empty_arrays.is_empty() => {
                EmptyArrays::Members(empty_arrays)
            }
            _ => EmptyArrays::None,
        };
        let nothing_parsed = match summary {
            ValueSummary::Null => true,
            ValueSummary::Text { blank } => *blank,
            ValueSummary::Object { prose_only, .. } => *prose_only,
            _ => false,
        };
        Observed { weak_status, empty_arrays, nothing_parsed }
    }

    /// The flags, in the fixed order of [`WeakSuccessFlag::ALL`].
    pub fn flags(&self) -> impl Iterator<Item = WeakSuccessFlag> + use<> {
        let raised = [self.weak_status.is_some(), !matches!(self.empty_arrays, EmptyArrays::None), self.nothing_parsed];
        WeakSuccessFlag::ALL.into_iter().zip(raised).filter_map(|(flag, raised)| raised.then_some(flag))
    }

    /// Call `each` with the JSON pointer of every empty array, written into `scratch`.
    pub fn for_each_empty_array(&self, scratch: &mut String, mut each: impl FnMut(&str)) {
        match self.empty_arrays {
            EmptyArrays::None => {}
            EmptyArrays::Root => each(""),
            EmptyArrays::Members(keys) => {
                for key in keys {
                    scratch.clear();
                    push_pointer_child(scratch, key);
                    each(scratch);
                }
            }
        }
    }
}

/// What the weak-success flags read of an ok value: its kind, and for objects the `status`
/// string, the members that are empty arrays, and whether every member is prose.
///
/// It can be taken from a [`Value`] or read straight from JSON text without building the
/// value (which is what lets the report read a million events quickly); either way its
/// strings are borrowed where they can be. Reading text gives up (so callers fall back to a
/// [`Value`]) for an object with a repeated key or more than [`SUMMARY_MEMBER_LIMIT`] members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ValueSummary<'a> {
    Null,
    Text {
        blank: bool,
    },
    /// A boolean or a number.
    Scalar,
    Array {
        empty: bool,
    },
    Object {
        status: Option<Cow<'a, str>>,
        empty_arrays: Vec<Cow<'a, str>>,
        prose_only: bool,
    },
}

/// The most members an object may have to be summarised straight from text.
pub(crate) const SUMMARY_MEMBER_LIMIT: usize = 16;

impl<'a> ValueSummary<'a> {
    pub fn of(value: &'a Value) -> ValueSummary<'a> {
        match value {
            Value::Null => ValueSummary::Null,
            Value::Bool(_) | Value::Number(_) => ValueSummary::Scalar,
            Value::String(text) => ValueSummary::Text { blank: text.trim().is_empty() },
            Value::Array(items) => ValueSummary::Array { empty: items.is_empty() },
            Value::Object(members) => ValueSummary::Object {
                status: members.get("status").and_then(Value::as_str).map(Cow::Borrowed),
                empty_arrays: members
                    .iter()
                    .filter(|(_, member)| member.as_array().is_some_and(Vec::is_empty))
                    .map(|(key, _)| Cow::Borrowed(key.as_str()))
                    .collect(),
                prose_only: members.keys().all(|key| PROSE_KEYS.contains(&key.as_str())),
            },
        }
    }

    /// The same summary owning its strings.
    pub fn into_owned(self) -> ValueSummary<'static> {
        match self {
            ValueSummary::Null => ValueSummary::Null,
            ValueSummary::Text { blank } => ValueSummary::Text { blank },
            ValueSummary::Scalar => ValueSummary::Scalar,
            ValueSummary::Array { empty } => ValueSummary::Array { empty },
            ValueSummary::Object { status, empty_arrays, prose_only } => ValueSummary::Object {
                status: status.map(|status| Cow::Owned(status.into_owned())),
                empty_arrays: empty_arrays.into_iter().map(|key| Cow::Owned(key.into_owned())).collect(),
                prose_only,
            },
        }
    }
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
    /// Keyed by the length-prefixed concatenation of trace, tool and method (unambiguous for
    /// any strings), so that a lookup reuses one buffer instead of allocating a key. A fast
    /// hash, seeded per process: the report looks up every call of a log.
    last: HashMap<Box<[u8]>, (u64, CallRef), RandomState>,
    scratch: Vec<u8>,
}

impl Default for CorrectionLinker {
    fn default() -> Self {
        CorrectionLinker::new(DEFAULT_CORRECTION_WINDOW_MS)
    }
}

/// One call as the linker sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallSighting<'a> {
    /// The call's trace; a call without one (or with an empty one) is never linked.
    pub trace_id: Option<&'a str>,
    /// The tool called.
    pub tool: &'a str,
    /// The method called.
    pub method: &'a str,
    /// Milliseconds since the epoch; a call without a time is never linked.
    pub at_ms: Option<u64>,
    /// Nesting depth; `None` counts as top level.
    pub depth: Option<u64>,
}

impl CorrectionLinker {
    /// A linker with no calls seen; a later call corrects an earlier one when it comes at most
    /// `window_ms` milliseconds after it.
    pub fn new(window_ms: u64) -> CorrectionLinker {
        CorrectionLinker { window_ms, last: HashMap::default(), scratch: Vec::new() }
    }

    /// The correction window, in milliseconds.
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
        self.scratch.clear();
        for part in [trace, call.tool, call.method] {
            self.scratch.extend_from_slice(&part.len().to_le_bytes());
            self.scratch.extend_from_slice(part.as_bytes());
        }
        let (previous_at, previous_call) = match self.last.get_mut(self.scratch.as_slice()) {
            Some(slot) => std::mem::replace(slot, (at_ms, this)),
            None => {
                self.last.insert(self.scratch.as_slice().into(), (at_ms, this));
                return None;
            }
        };
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

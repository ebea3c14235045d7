//! Stable diagnostic codes. A code never changes meaning once published; the reference's
//! rule id (from the format spec) is kept beside each for traceability.
//!
//! The hundreds say the layer: `DC01xx` parse, `DC02xx` schema, `DC03xx` policy, `DC04xx`
//! adapter (the host's capabilities), `DC05xx` lints (warnings about what the reference
//! silently accepts). Hosts and tools should match on these constants, never on messages,
//! which may be reworded.

/// Declares each code as a documented constant and lists it in [`CODES`], from one row, so
/// the table and the constants cannot drift apart.
macro_rules! codes {
    ($($(#[$extra:meta])* $name:ident = $code:literal, $id:literal, $summary:literal;)*) => {
        $(
            #[doc = concat!("`", $code, "` (reference `", $id, "`): ", $summary, ".")]
            ///
            $(#[$extra])*
            pub const $name: &str = $code;
        )*

        /// Every code as `(code, reference rule id or lint name, one-line summary)`, in the
        /// order of the codes.
        pub const CODES: &[(&str, &str, &str)] = &[$(($name, $id, $summary)),*];
    };
}

codes! {
    INVALID_UTF8 = "DC0100", "P-UTF8", "the file is not valid UTF-8";
    FRAME_NO_WHY = "DC0101", "P-FRAME-NO-WHY", "frame line gives no reason";
    FRAME_EMPTY = "DC0102", "P-FRAME-EMPTY", "frame line is empty";
    FRAME_EXCL_EXTRA = "DC0103", "P-FRAME-EXCL-EXTRA", "an exclusion names only the cell";
    FRAME_BOUND = "DC0104", "P-FRAME-BOUND", "frame field lacks a positive decimal bound";
    FRAME_COLUMNS = "DC0105", "P-FRAME-COLUMNS", "frame field has more than three columns";
    POL_NO_ARROW = "DC0106", "P-POL-NO-ARROW", "policy rule lacks `→ action`";
    POL_EMPTY = "DC0107", "P-POL-EMPTY", "policy rule has an empty predicate or action";
    POL_UNKNOWN_ACTION = "DC0108", "P-POL-UNKNOWN-ACTION", "unknown action";
    KIND_INVALID = "DC0109", "P-KIND", "invalid kind";
    FRAME_VALUE = "DC0110", "P-FRAME-VALUE", "`frame:` takes no value";
    UNKNOWN_KEY = "DC0111", "P-UNKNOWN-KEY", "unknown key";
    KIND_MISSING = "DC0112", "P-KIND-MISSING", "block declares no kind";
    WHEN_MISSING = "DC0113", "P-WHEN-MISSING", "`when:` names no position";
    WHEN_LEFTOVER = "DC0114", "P-WHEN-LEFTOVER", "text after the position is not introduced by `——`";
    WHEN_UNKNOWN = "DC0115", "P-WHEN-UNKNOWN", "not a position";
    ACTION_NOT_AT_POSITION = "DC0116", "P-ACTION-NOT-AT-POSITION", "the position does not handle the action";
    DYN_NO_WHY = "DC0117", "P-DYN-NO-WHY", "`dynamic:` gives no reason";
    DYN_NO_ARROW = "DC0118", "P-DYN-NO-ARROW", "`dynamic:` lacks `→ output`";
    DYN_MULTI_ARROW = "DC0119", "P-DYN-MULTI-ARROW", "`dynamic:` has more than one arrow";
    DYN_OUTPUT = "DC0120", "P-DYN-OUTPUT", "unknown dynamic output";
    DYN_CALL = "DC0121", "P-DYN-CALL", "dynamic provider is not written `name(ctx: cell, …)`";
    DYN_NO_CELLS = "DC0122", "P-DYN-NO-CELLS", "dynamic provider names no cells";
    DYN_BAD_CELL = "DC0123", "P-DYN-BAD-CELL", "dynamic cell name is not an identifier";
    DYN_DUP_CELLS = "DC0124", "P-DYN-DUP-CELLS", "dynamic cell names repeated";
    Q_NO_OPTIONS = "DC0125", "P-Q-NO-OPTIONS", "question has no options";
    Q_MIXED_STYLE = "DC0126", "P-Q-MIXED-STYLE", "some options named, some not";
    Q_NO_ASK = "DC0127", "P-Q-NO-ASK", "question lacks `ask:`";
    Q_DUP_ID = "DC0129", "P-Q-DUP-ID", "duplicate question id";
    RULE_HAS_QUESTIONS = "DC0130", "P-RULE-HAS-QUESTIONS", "a rule block asks questions";
    MIXED_TOO_FEW = "DC0131", "P-MIXED-TOO-FEW", "mixed block with fewer than two questions";
    SINGLE_COUNT = "DC0132", "P-SINGLE-COUNT", "single-question kind with another number of questions";
    KIND_MISMATCH = "DC0133", "P-KIND-MISMATCH", "kind does not match the option style";
    CHOICE_FEW = "DC0134", "P-CHOICE-FEW", "choice with fewer than two options and no `dynamic:`";
    BLOCK_DUP_ID = "DC0135", "P-BLOCK-DUP-ID", "duplicate block id";
    /// A block asked of a decision model (any kind but `rule`) without `frame:` would send the
    /// whole state, unbounded.
    NO_FRAME = "DC0136", "no-frame", "a block asked of a decision model declares no `frame:`";
    /// The file has more blocks than [`crate::syntax::MAX_BLOCKS`] or more items (questions,
    /// options, frame lines, policy rules) than [`crate::syntax::MAX_ITEMS`]; nothing after
    /// the one that is too many is read, so memory stays bounded whatever the file.
    TOO_LARGE = "DC0137", "too-large", "the file has more blocks or items than are read; the rest is not read";
    SCHEMA_MISSING = "DC0201", "S-MISSING", "no `schema:` declaration";
    SCHEMA_UNSUPPORTED = "DC0202", "S-UNSUPPORTED", "unsupported schema";
    UNCOMPILED = "DC0301", "C-UNCOMPILED", "predicate does not compile";
    /// A rule whose action is `ask_human` or `escalate` is shadowed by an earlier rule on the
    /// same probe (e.g. increasing `>=` tiers), so the gate never fires.
    DEAD_GATE = "DC0302", "dead-gate", "an authorisation gate rule is shadowed by an earlier rule and never fires";
    /// A rule whose action is `ask_human` or `escalate` has a threshold no answer can reach.
    GATE_UNREACHABLE = "DC0303", "gate-unreachable", "an authorisation gate rule's threshold is outside its probe's range";
    A_POSITION = "DC0401", "A-POSITION", "host has not registered the position";
    A_ACTION = "DC0402", "A-ACTION", "host has no handler for the action";
    A_ACTION_AT_POSITION = "DC0403", "A-ACTION-AT-POSITION", "registered position does not handle the action";
    A_PROVIDER = "DC0404", "A-PROVIDER", "host has not registered the dynamic provider";
    A_PROVIDER_READS_MISSING = "DC0405", "A-PROVIDER-READS-MISSING", "host declares no reads for the provider";
    A_PROVIDER_READS_LESS = "DC0406", "A-PROVIDER-READS-LESS", "file says the provider reads cells the host does not";
    A_PROVIDER_READS_MORE = "DC0407", "A-PROVIDER-READS-MORE", "host's provider reads cells the file does not name";
    A_PROJECTION = "DC0408", "A-PROJECTION", "host has not registered the projection";
    A_STATE_CELL = "DC0409", "A-STATE-CELL", "host has not registered the state cell";
    A_BLOCK_MISSING = "DC0410", "F-BLOCK-MISSING", "a block the host requires is missing";
    A_EXCL_UNKNOWN = "DC0411", "F-EXCL-UNKNOWN", "excluded name is not a state cell";
    A_EXCL_NO_WHY = "DC0412", "F-EXCL-NO-WHY", "exclusion reason is empty";
    A_CONTRADICTION = "DC0413", "F-CONTRADICTION", "a cell is both read and excluded";
    A_FIELD_NO_WHY = "DC0414", "F-FIELD-NO-WHY", "field reason is empty";
    A_UNCOVERED = "DC0415", "F-UNCOVERED", "a cell is neither read nor excluded";
    A_QUESTION_IDS = "DC0416", "F-QUESTION-IDS", "the host reads other question ids";
    L_DUP_KIND = "DC0501", "dup-kind", "`kind:` written twice; the last wins";
    L_DUP_WHEN = "DC0502", "dup-when", "`when:` written twice; the last wins";
    L_DUP_DYNAMIC = "DC0503", "dup-dynamic", "`dynamic:` written twice; the last wins";
    L_DUP_ASK = "DC0504", "dup-ask", "`ask:` written twice for one question; the last wins";
    L_SECOND_FRAME = "DC0505", "second-frame", "a second `frame:` discards the first";
    L_UNREACHABLE_RULE = "DC0506", "unreachable-rule", "rule after a catch-all can never fire";
    L_THRESHOLD_RANGE = "DC0507", "threshold-range", "threshold outside the range of its probe";
    L_PICKED_NOT_OPTION = "DC0508", "picked-not-option", "`picked:` names no option of the question";
    L_DUP_OPTION = "DC0509", "dup-option", "duplicate option name";
    L_DUP_FIELD = "DC0510", "dup-field", "duplicate frame field";
    L_DUP_EXCLUSION = "DC0511", "dup-exclusion", "duplicate frame exclusion";
    L_READ_AND_EXCLUDED = "DC0512", "read-and-excluded", "a cell is both read and excluded";
    L_FRAME_LINE_DROPPED = "DC0513", "frame-line-dropped", "a frame-like line fell out of the frame region";
    L_NO_FALLBACK = "DC0514", "no-fallback", "policy has no catch-all rule";
    L_POLICY_VALUE = "DC0515", "policy-value", "text after `policy:` is ignored";
    L_NOT_A_HEADING = "DC0516", "not-a-heading", "a heading-like line is read as prose";
    /// A rule (not a gate) shadowed by an earlier rule on the same probe can never fire.
    L_SHADOWED_RULE = "DC0517", "shadowed-rule", "rule shadowed by an earlier rule on the same probe can never fire";
}

/// The reference rule id or lint name of a code (`rule_id("DC0108") == Some("P-POL-UNKNOWN-ACTION")`);
/// `None` for a string that is not one of [`CODES`].
pub fn rule_id(code: &str) -> Option<&'static str> {
    CODES.iter().find(|(c, _, _)| *c == code).map(|(_, id, _)| *id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique() {
        let codes: HashSet<_> = CODES.iter().map(|(c, _, _)| c).collect();
        let ids: HashSet<_> = CODES.iter().map(|(_, id, _)| id).collect();
        assert_eq!(codes.len(), CODES.len());
        assert_eq!(ids.len(), CODES.len());
    }
}

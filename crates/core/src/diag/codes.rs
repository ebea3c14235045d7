//! Stable diagnostic codes. A code never changes meaning once published; the reference's
//! rule id (from the format spec) is kept beside each for traceability.

/// (code, reference rule id or lint name, one-line summary)
pub const CODES: &[(&str, &str, &str)] = &[
    (INVALID_UTF8, "P-UTF8", "the file is not valid UTF-8"),
    (FRAME_NO_WHY, "P-FRAME-NO-WHY", "frame line gives no reason"),
    (FRAME_EMPTY, "P-FRAME-EMPTY", "frame line is empty"),
    (FRAME_EXCL_EXTRA, "P-FRAME-EXCL-EXTRA", "an exclusion names only the cell"),
    (FRAME_BOUND, "P-FRAME-BOUND", "frame field lacks a positive decimal bound"),
    (FRAME_COLUMNS, "P-FRAME-COLUMNS", "frame field has more than three columns"),
    (POL_NO_ARROW, "P-POL-NO-ARROW", "policy rule lacks `→ action`"),
    (POL_EMPTY, "P-POL-EMPTY", "policy rule has an empty predicate or action"),
    (POL_UNKNOWN_ACTION, "P-POL-UNKNOWN-ACTION", "unknown action"),
    (KIND_INVALID, "P-KIND", "invalid kind"),
    (FRAME_VALUE, "P-FRAME-VALUE", "`frame:` takes no value"),
    (UNKNOWN_KEY, "P-UNKNOWN-KEY", "unknown key"),
    (KIND_MISSING, "P-KIND-MISSING", "block declares no kind"),
    (WHEN_MISSING, "P-WHEN-MISSING", "`when:` names no position"),
    (WHEN_LEFTOVER, "P-WHEN-LEFTOVER", "text after the position is not introduced by `——`"),
    (WHEN_UNKNOWN, "P-WHEN-UNKNOWN", "not a position"),
    (ACTION_NOT_AT_POSITION, "P-ACTION-NOT-AT-POSITION", "the position does not handle the action"),
    (DYN_NO_WHY, "P-DYN-NO-WHY", "`dynamic:` gives no reason"),
    (DYN_NO_ARROW, "P-DYN-NO-ARROW", "`dynamic:` lacks `→ output`"),
    (DYN_MULTI_ARROW, "P-DYN-MULTI-ARROW", "`dynamic:` has more than one arrow"),
    (DYN_OUTPUT, "P-DYN-OUTPUT", "unknown dynamic output"),
    (DYN_CALL, "P-DYN-CALL", "dynamic provider is not written `name(ctx: cell, …)`"),
    (DYN_NO_CELLS, "P-DYN-NO-CELLS", "dynamic provider names no cells"),
    (DYN_BAD_CELL, "P-DYN-BAD-CELL", "dynamic cell name is not an identifier"),
    (DYN_DUP_CELLS, "P-DYN-DUP-CELLS", "dynamic cell names repeated"),
    (Q_NO_OPTIONS, "P-Q-NO-OPTIONS", "question has no options"),
    (Q_MIXED_STYLE, "P-Q-MIXED-STYLE", "some options named, some not"),
    (Q_NO_ASK, "P-Q-NO-ASK", "question lacks `ask:`"),
    (Q_DUP_ID, "P-Q-DUP-ID", "duplicate question id"),
    (RULE_HAS_QUESTIONS, "P-RULE-HAS-QUESTIONS", "a rule block asks questions"),
    (MIXED_TOO_FEW, "P-MIXED-TOO-FEW", "mixed block with fewer than two questions"),
    (SINGLE_COUNT, "P-SINGLE-COUNT", "single-question kind with another number of questions"),
    (KIND_MISMATCH, "P-KIND-MISMATCH", "kind does not match the option style"),
    (CHOICE_FEW, "P-CHOICE-FEW", "choice with fewer than two options and no `dynamic:`"),
    (BLOCK_DUP_ID, "P-BLOCK-DUP-ID", "duplicate block id"),
    (NO_FRAME, "no-frame", "a block asked of a decision model declares no `frame:`"),
    (TOO_LARGE, "too-large", "the file has more blocks or items than are read; the rest is not read"),
    (SCHEMA_MISSING, "S-MISSING", "no `schema:` declaration"),
    (SCHEMA_UNSUPPORTED, "S-UNSUPPORTED", "unsupported schema"),
    (UNCOMPILED, "C-UNCOMPILED", "predicate does not compile"),
    (DEAD_GATE, "dead-gate", "an authorisation gate rule is shadowed by an earlier rule and never fires"),
    (GATE_UNREACHABLE, "gate-unreachable", "an authorisation gate rule's threshold is outside its probe's range"),
    (A_POSITION, "A-POSITION", "host has not registered the position"),
    (A_ACTION, "A-ACTION", "host has no handler for the action"),
    (A_ACTION_AT_POSITION, "A-ACTION-AT-POSITION", "registered position does not handle the action"),
    (A_PROVIDER, "A-PROVIDER", "host has not registered the dynamic provider"),
    (A_PROVIDER_READS_MISSING, "A-PROVIDER-READS-MISSING", "host declares no reads for the provider"),
    (A_PROVIDER_READS_LESS, "A-PROVIDER-READS-LESS", "file says the provider reads cells the host does not"),
    (A_PROVIDER_READS_MORE, "A-PROVIDER-READS-MORE", "host's provider reads cells the file does not name"),
    (A_PROJECTION, "A-PROJECTION", "host has not registered the projection"),
    (A_STATE_CELL, "A-STATE-CELL", "host has not registered the state cell"),
    (A_BLOCK_MISSING, "F-BLOCK-MISSING", "a block the host requires is missing"),
    (A_EXCL_UNKNOWN, "F-EXCL-UNKNOWN", "excluded name is not a state cell"),
    (A_EXCL_NO_WHY, "F-EXCL-NO-WHY", "exclusion reason is empty"),
    (A_CONTRADICTION, "F-CONTRADICTION", "a cell is both read and excluded"),
    (A_FIELD_NO_WHY, "F-FIELD-NO-WHY", "field reason is empty"),
    (A_UNCOVERED, "F-UNCOVERED", "a cell is neither read nor excluded"),
    (A_QUESTION_IDS, "F-QUESTION-IDS", "the host reads other question ids"),
    (L_DUP_KIND, "dup-kind", "`kind:` written twice; the last wins"),
    (L_DUP_WHEN, "dup-when", "`when:` written twice; the last wins"),
    (L_DUP_DYNAMIC, "dup-dynamic", "`dynamic:` written twice; the last wins"),
    (L_DUP_ASK, "dup-ask", "`ask:` written twice for one question; the last wins"),
    (L_SECOND_FRAME, "second-frame", "a second `frame:` discards the first"),
    (L_UNREACHABLE_RULE, "unreachable-rule", "rule after a catch-all can never fire"),
    (L_THRESHOLD_RANGE, "threshold-range", "threshold outside the range of its probe"),
    (L_PICKED_NOT_OPTION, "picked-not-option", "`picked:` names no option of the question"),
    (L_DUP_OPTION, "dup-option", "duplicate option name"),
    (L_DUP_FIELD, "dup-field", "duplicate frame field"),
    (L_DUP_EXCLUSION, "dup-exclusion", "duplicate frame exclusion"),
    (L_READ_AND_EXCLUDED, "read-and-excluded", "a cell is both read and excluded"),
    (L_FRAME_LINE_DROPPED, "frame-line-dropped", "a frame-like line fell out of the frame region"),
    (L_NO_FALLBACK, "no-fallback", "policy has no catch-all rule"),
    (L_POLICY_VALUE, "policy-value", "text after `policy:` is ignored"),
    (L_NOT_A_HEADING, "not-a-heading", "a heading-like line is read as prose"),
    (L_SHADOWED_RULE, "shadowed-rule", "rule shadowed by an earlier rule on the same probe can never fire"),
];

pub const INVALID_UTF8: &str = "DC0100";
pub const FRAME_NO_WHY: &str = "DC0101";
pub const FRAME_EMPTY: &str = "DC0102";
pub const FRAME_EXCL_EXTRA: &str = "DC0103";
pub const FRAME_BOUND: &str = "DC0104";
pub const FRAME_COLUMNS: &str = "DC0105";
pub const POL_NO_ARROW: &str = "DC0106";
pub const POL_EMPTY: &str = "DC0107";
pub const POL_UNKNOWN_ACTION: &str = "DC0108";
pub const KIND_INVALID: &str = "DC0109";
pub const FRAME_VALUE: &str = "DC0110";
pub const UNKNOWN_KEY: &str = "DC0111";
pub const KIND_MISSING: &str = "DC0112";
pub const WHEN_MISSING: &str = "DC0113";
pub const WHEN_LEFTOVER: &str = "DC0114";
pub const WHEN_UNKNOWN: &str = "DC0115";
pub const ACTION_NOT_AT_POSITION: &str = "DC0116";
pub const DYN_NO_WHY: &str = "DC0117";
pub const DYN_NO_ARROW: &str = "DC0118";
pub const DYN_MULTI_ARROW: &str = "DC0119";
pub const DYN_OUTPUT: &str = "DC0120";
pub const DYN_CALL: &str = "DC0121";
pub const DYN_NO_CELLS: &str = "DC0122";
pub const DYN_BAD_CELL: &str = "DC0123";
pub const DYN_DUP_CELLS: &str = "DC0124";
pub const Q_NO_OPTIONS: &str = "DC0125";
pub const Q_MIXED_STYLE: &str = "DC0126";
pub const Q_NO_ASK: &str = "DC0127";
pub const Q_DUP_ID: &str = "DC0129";
pub const RULE_HAS_QUESTIONS: &str = "DC0130";
pub const MIXED_TOO_FEW: &str = "DC0131";
pub const SINGLE_COUNT: &str = "DC0132";
pub const KIND_MISMATCH: &str = "DC0133";
pub const CHOICE_FEW: &str = "DC0134";
pub const BLOCK_DUP_ID: &str = "DC0135";
/// A block asked of a decision model (any kind but `rule`) without `frame:` would send the
/// whole state, unbounded.
pub const NO_FRAME: &str = "DC0136";
/// The file has more blocks than [`crate::syntax::MAX_BLOCKS`] or more items (questions,
/// options, frame lines, policy rules) than [`crate::syntax::MAX_ITEMS`]; nothing after the
/// one that is too many is read, so memory stays bounded whatever the file.
pub const TOO_LARGE: &str = "DC0137";
pub const SCHEMA_MISSING: &str = "DC0201";
pub const SCHEMA_UNSUPPORTED: &str = "DC0202";
pub const UNCOMPILED: &str = "DC0301";
/// A rule whose action is `ask_human` or `escalate` is shadowed by an earlier rule on the
/// same probe (e.g. increasing `>=` tiers), so the gate never fires.
pub const DEAD_GATE: &str = "DC0302";
/// A rule whose action is `ask_human` or `escalate` has a threshold no answer can reach.
pub const GATE_UNREACHABLE: &str = "DC0303";
pub const A_POSITION: &str = "DC0401";
pub const A_ACTION: &str = "DC0402";
pub const A_ACTION_AT_POSITION: &str = "DC0403";
pub const A_PROVIDER: &str = "DC0404";
pub const A_PROVIDER_READS_MISSING: &str = "DC0405";
pub const A_PROVIDER_READS_LESS: &str = "DC0406";
pub const A_PROVIDER_READS_MORE: &str = "DC0407";
pub const A_PROJECTION: &str = "DC0408";
pub const A_STATE_CELL: &str = "DC0409";
pub const A_BLOCK_MISSING: &str = "DC0410";
pub const A_EXCL_UNKNOWN: &str = "DC0411";
pub const A_EXCL_NO_WHY: &str = "DC0412";
pub const A_CONTRADICTION: &str = "DC0413";
pub const A_FIELD_NO_WHY: &str = "DC0414";
pub const A_UNCOVERED: &str = "DC0415";
pub const A_QUESTION_IDS: &str = "DC0416";
pub const L_DUP_KIND: &str = "DC0501";
pub const L_DUP_WHEN: &str = "DC0502";
pub const L_DUP_DYNAMIC: &str = "DC0503";
pub const L_DUP_ASK: &str = "DC0504";
pub const L_SECOND_FRAME: &str = "DC0505";
pub const L_UNREACHABLE_RULE: &str = "DC0506";
pub const L_THRESHOLD_RANGE: &str = "DC0507";
pub const L_PICKED_NOT_OPTION: &str = "DC0508";
pub const L_DUP_OPTION: &str = "DC0509";
pub const L_DUP_FIELD: &str = "DC0510";
pub const L_DUP_EXCLUSION: &str = "DC0511";
pub const L_READ_AND_EXCLUDED: &str = "DC0512";
pub const L_FRAME_LINE_DROPPED: &str = "DC0513";
pub const L_NO_FALLBACK: &str = "DC0514";
pub const L_POLICY_VALUE: &str = "DC0515";
pub const L_NOT_A_HEADING: &str = "DC0516";
/// A rule (not a gate) shadowed by an earlier rule on the same probe can never fire.
pub const L_SHADOWED_RULE: &str = "DC0517";

/// The reference rule id or lint name of a code.
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

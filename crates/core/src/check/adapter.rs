//! The adapter layer: the contract against a host's capabilities, in both directions for
//! provider reads. With a profile that requires them, also the required blocks, question
//! ids and full frame coverage (the reference's "frame layer").

use std::collections::HashMap;

use super::Capabilities;
use crate::contract::{Block, Contract};
use crate::diag::codes;
use crate::diag::{self, Diagnostic, Layer, Severity, Span};
use crate::names::NameSet;
use crate::suggest::did_you_mean;
use crate::vocab::{self, ANY_POSITION_ACTION};

/// The diagnostics' destination, and the block being checked.
struct Sink<'a, 'o> {
    out: &'o mut dyn diag::Sink,
    block: Option<&'a str>,
}

impl Sink<'_, '_> {
    fn push(&mut self, code: &'static str, span: Span, message: String, help: Option<String>) {
        self.out.push(Diagnostic {
            code,
            severity: Severity::Error,
            layer: Layer::Adapter,
            message,
            span,
            block: self.block.filter(|_| self.out.keeps(Severity::Error)).map(str::to_string),
            help,
        });
    }
}

fn suggest_in(word: &str, names: &[String], what: &str) -> Option<String> {
    if names.is_empty() {
        return Some(format!("the host registers no {what}"));
    }
    did_you_mean(word, names.iter().map(String::as_str))
        .map(|s| format!("did you mean `{s}`?"))
        .or_else(|| Some(format!("the host registers {what}: {}", names.join(", "))))
}

/// Check a contract against a host's capabilities.
pub fn adapter(contract: &Contract, caps: &Capabilities) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    adapter_into(contract, caps, &mut out);
    out
}

/// [`adapter`], each diagnostic added to `out` as it is found.
pub(super) fn adapter_into(contract: &Contract, caps: &Capabilities, out: &mut dyn diag::Sink) {
    let mut sink = Sink { out, block: None };
    for required in &caps.required_blocks {
        if !contract.blocks.iter().any(|b| &b.id == required) {
            let existing = contract.blocks.iter().map(|b| b.id.as_str()).collect::<Vec<_>>().join(", ");
            sink.push(
                codes::A_BLOCK_MISSING,
                Span { line: 1, column: 1, start: 0, end: 0 },
                format!("the host requires a block `{required}`, and the file has none (it has: {existing})"),
                did_you_mean(required, contract.blocks.iter().map(|b| b.id.as_str()))
                    .or_else(|| contract.blocks.iter().map(|b| b.id.as_str()).find(|id| id.contains(required.as_str())))
                    .map(|b| format!("did you mean to name `## {b}` `## {required}`?"))
                    .or_else(|| Some(format!("add `## {required}`"))),
            );
        }
    }
    let cells = caps.state_cells.as_deref().map(CellIndex::new);
    let projections = ProjectionIndex::new(caps);
    let mut marks = Vec::new();
    for block in &contract.blocks {
        sink.block = Some(&block.id);
        check_block(&mut sink, block, caps, &projections, cells.as_ref(), &mut marks);
    }
}

/// Whether two names are equal, comparing the length and the first byte before the rest.
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().first() == b.as_bytes().first() && a == b
}

/// The host's projections and the cells they read, looked up for every frame field: a scan of
/// the usual dozen or so (no string ordering, as the map's lookups need), the map otherwise.
struct ProjectionIndex<'a> {
    caps: &'a Capabilities,
    /// The projection reads as a list, when short.
    reads: Option<Vec<(&'a str, &'a str)>>,
}

impl<'a> ProjectionIndex<'a> {
    const SCAN: usize = 16;

    fn new(caps: &'a Capabilities) -> ProjectionIndex<'a> {
        let reads = (caps.projection_reads.len() <= Self::SCAN)
            .then(|| caps.projection_reads.iter().map(|(p, cell)| (p.as_str(), cell.as_str())).collect());
        ProjectionIndex { caps, reads }
    }

    fn is_registered(&self, projection: &str) -> bool {
        self.caps.projections.iter().any(|p| same_name(p, projection))
    }

    /// The cell `projection` reads, if known (as [`Capabilities::projection_cell`]).
    fn cell(&self, projection: &str) -> Option<&'a str> {
        match &self.reads {
            Some(reads) => reads.iter().find(|(p, _)| same_name(p, projection)).map(|(_, cell)| *cell),
            None => self.caps.projection_cell(projection),
        }
    }
}

/// The host's state cells, looked up by name: a scan for the usual handful, a map for long
/// lists. Every frame entry's cell is looked up once and then handled by its position.
struct CellIndex<'a> {
    cells: &'a [String],
    by_name: Option<HashMap<&'a str, usize>>,
    /// For each cell, the position of the first cell of the same name (duplicates share marks).
    first: Vec<usize>,
}

impl<'a> CellIndex<'a> {
    const SCAN: usize = 16;

    fn new(cells: &'a [String]) -> CellIndex<'a> {
        let by_name = (cells.len() > Self::SCAN).then(|| {
            let mut map = HashMap::with_capacity(cells.len());
            for (at, cell) in cells.iter().enumerate() {
                map.entry(cell.as_str()).or_insert(at);
            }
            map
        });
        let mut index = CellIndex { cells, by_name, first: Vec::new() };
        index.first = cells.iter().enumerate().map(|(at, cell)| index.position(cell).unwrap_or(at)).collect();
        index
    }

    /// The position of the first cell named `name`.
    fn position(&self, name: &str) -> Option<usize> {
        match &self.by_name {
            Some(map) => map.get(name).copied(),
            None => self.cells.iter().position(|cell| same_name(cell, name)),
        }
    }
}

fn check_block(
    sink: &mut Sink<'_, '_>,
    block: &Block,
    caps: &Capabilities,
    projections: &ProjectionIndex<'_>,
    cell_index: Option<&CellIndex<'_>>,
    marks: &mut Vec<u8>,
) {
    let position_actions = caps.positions.get(&block.position);
    // A missing or unknown position is a parse error already (DC0113, DC0115): one mistake,
    // one report. Only a `host:` position or a core one can be missing from a host.
    let position_reported = block.position.is_empty()
        || (vocab::position_actions(&block.position).is_none() && !vocab::is_host_name(&block.position));
    if position_actions.is_none() && !position_reported {
        let positions: Vec<String> = caps.positions.keys().cloned().collect();
        sink.push(
            codes::A_POSITION,
            block.span,
            format!(
                "the host has not registered position `{}` (`when:` on line {})",
                block.position, block.when_span.line
            ),
            suggest_in(&block.position, &positions, "positions"),
        );
    }
    for rule in &block.policy {
        // An unknown action is a parse error already (DC0108), and so is a core position
        // given an action the format does not allow there (DC0116).
        let core = vocab::position_actions(&block.position);
        if !vocab::is_action(&rule.action)
            || core.is_some_and(|a| !a.contains(&rule.action.as_str()) && rule.action != ANY_POSITION_ACTION)
        {
            continue;
        }
        if !caps.actions.contains(&rule.action) {
            sink.push(
                codes::A_ACTION,
                block.span,
                format!("the host has no handler for action `{}` (rule on line {})", rule.action, rule.span.line),
                suggest_in(&rule.action, &caps.actions, "actions"),
            );
            // Without a handler it is handled nowhere: the position need not say so again.
            continue;
        }
        if let Some(handled) = position_actions
            && rule.action != ANY_POSITION_ACTION
            && !handled.contains(&rule.action)
        {
            sink.push(
                codes::A_ACTION_AT_POSITION,
                block.span,
                format!(
                    "position `{}` does not handle action `{}` in this host (rule on line {})",
                    block.position, rule.action, rule.span.line
                ),
                Some(format!(
                    "in this host `{}` handles {} / {ANY_POSITION_ACTION}",
                    block.position,
                    handled.iter().filter(|a| *a != ANY_POSITION_ACTION).cloned().collect::<Vec<_>>().join(" / ")
                )),
            );
        }
    }
    if let Some(dynamic) = &block.dynamic
        && !dynamic.provider.is_empty()
    {
        let provider = &dynamic.provider;
        if !caps.dynamic_providers.contains(provider) {
            sink.push(
                codes::A_PROVIDER,
                block.span,
                format!(
                    "the host has not registered dynamic provider `{provider}` (`dynamic:` on line {})",
                    dynamic.span.line
                ),
                suggest_in(provider, &caps.dynamic_providers, "providers"),
            );
        }
        match caps.dynamic_provider_reads.get(provider) {
            None => sink.push(
                codes::A_PROVIDER_READS_MISSING,
                block.span,
                format!(
                    "the host does not declare which cells provider `{provider}` reads (the file says {}; `dynamic:` on line {})",
                    dynamic.reads.join(", "),
                    dynamic.span.line
                ),
                Some("declare the provider's reads in the host's capabilities".into()),
            ),
            Some(host_reads) => {
                let less: Vec<&str> =
                    dynamic.reads.iter().filter(|c| !host_reads.contains(c)).map(String::as_str).collect();
                let more: Vec<&str> =
                    host_reads.iter().filter(|c| !dynamic.reads.contains(c)).map(String::as_str).collect();
                if !less.is_empty() {
                    sink.push(
                        codes::A_PROVIDER_READS_LESS,
                        block.span,
                        format!("the file says provider `{provider}` reads [{}], which the host's provider does not read; candidates would silently lose a class", less.join(", ")),
                        Some(format!("the host's `{provider}` reads: {}", host_reads.join(", "))),
                    );
                }
                if !more.is_empty() {
                    sink.push(
                        codes::A_PROVIDER_READS_MORE,
                        block.span,
                        format!("the host's provider `{provider}` also reads [{}], which the file does not name; candidates would change for an undeclared reason", more.join(", ")),
                        Some(format!("add them to the `dynamic:` line: `{provider}(ctx: {})`", host_reads.join(", "))),
                    );
                }
            }
        }
    }
    if let Some(frame) = &block.frame {
        for field in &frame.fields {
            match &field.projection {
                Some(p) if !projections.is_registered(p) => {
                    sink.push(
                        codes::A_PROJECTION,
                        field.span,
                        format!("the host has not registered projection `{p}`"),
                        suggest_in(p, &caps.projections, "projections"),
                    );
                }
                Some(_) => {}
                None => {
                    if let Some(index) = cell_index
                        && index.position(&field.key).is_none()
                    {
                        sink.push(
                            codes::A_STATE_CELL,
                            field.span,
                            format!("`{}` is neither a state cell of the host nor given a projection", field.key),
                            suggest_in(&field.key, index.cells, "state cells"),
                        );
                    }
                }
            }
            if caps.require_coverage && field.why.is_empty() {
                sink.push(
                    codes::A_FIELD_NO_WHY,
                    field.span,
                    format!("field `{}` does not say why it is in this decision", field.key),
                    Some("add `—— reason`".into()),
                );
            }
        }
        for exclusion in &frame.excluded {
            if let Some(index) = cell_index
                && index.position(&exclusion.field).is_none()
            {
                sink.push(
                    codes::A_EXCL_UNKNOWN,
                    exclusion.span,
                    format!("excluded name `{}` is not a state cell of the host", exclusion.field),
                    suggest_in(&exclusion.field, index.cells, "state cells"),
                );
            }
            if caps.require_coverage && exclusion.why.is_empty() {
                sink.push(
                    codes::A_EXCL_NO_WHY,
                    exclusion.span,
                    format!(
                        "exclusion of `{}` gives no reason, which is the same as not declaring it",
                        exclusion.field
                    ),
                    Some("add `—— reason`".into()),
                );
            }
        }
        if caps.require_coverage
            && (caps.required_blocks.is_empty() || caps.required_blocks.contains(&block.id))
            && let Some(index) = cell_index
        {
            coverage(sink, block, projections, index, marks);
        }
    }
    if let Some(expected) = caps.required_questions.get(&block.id) {
        // Compared without collecting: the lists are built only for the message.
        if !block.questions.iter().map(|q| q.id.as_str()).eq(expected.iter().map(String::as_str)) {
            let actual: Vec<&str> = block.questions.iter().map(|q| q.id.as_str()).collect();
            sink.push(
                codes::A_QUESTION_IDS,
                block.span,
                format!(
                    "the host reads questions [{}] from `{}`, the file asks [{}]",
                    expected.join(", "),
                    block.id,
                    actual.join(", ")
                ),
                Some("name the questions as the host reads them (`### id`)".into()),
            );
        }
    }
}

/// A cell read by a field.
const READ: u8 = 1;
/// A cell deliberately excluded.
const EXCLUDED: u8 = 2;

/// Every state cell is either the source of a field or deliberately excluded, never both.
/// `marks` is a buffer reused from block to block.
fn coverage(
    sink: &mut Sink<'_, '_>,
    block: &Block,
    projections: &ProjectionIndex<'_>,
    cells: &CellIndex<'_>,
    marks: &mut Vec<u8>,
) {
    let Some(frame) = &block.frame else { return };
    marks.clear();
    marks.resize(cells.cells.len(), 0);
    // Sources that are not state cells are rare: they are kept by name.
    let mut other_sources = NameSet::new();
    for field in &frame.fields {
        let source = field.source_cell(|p| projections.cell(p));
        match cells.position(source).and_then(|at| marks.get_mut(at)) {
            Some(mark) => *mark |= READ,
            None => {
                other_sources.insert(source);
            }
        }
    }
    for exclusion in &frame.excluded {
        let at = cells.position(&exclusion.field);
        let read = match at.and_then(|at| marks.get(at)) {
            Some(mark) => mark & READ != 0,
            None => other_sources.contains(&exclusion.field),
        };
        if read {
            sink.push(
                codes::A_CONTRADICTION,
                exclusion.span,
                format!("`{}` is both read by a field and excluded", exclusion.field),
                Some("remove the exclusion or the field that reads it".into()),
            );
        }
        if let Some(mark) = at.and_then(|at| marks.get_mut(at)) {
            *mark |= EXCLUDED;
        }
    }
    for (cell, first) in cells.cells.iter().zip(&cells.first) {
        if marks.get(*first).is_some_and(|mark| *mark == 0) {
            sink.push(
                codes::A_UNCOVERED,
                frame.span,
                format!("state cell `{cell}` is neither read nor deliberately excluded"),
                Some(format!("add `- {cell} —— why this decision does not see it`")),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check};

    #[test]
    fn coverage_handles_repeated_cells_and_names_that_are_not_cells() {
        let source = "schema: decision-contract/v1\n\n## b\n\nkind: noul\nwhen: step-start —— p\n\nask: q?\n\n\
- true — a\n- false — b\n\nframe:\n  + task 10 —— r\n  + other 5 —— r\n  - other —— r\n\npolicy:\n  - else → answer\n";
        let mut caps = Capabilities::reference();
        caps.state_cells = Some(vec!["task".into(), "cwd".into(), "cwd".into()]);
        caps.required_blocks.clear();
        caps.required_questions.clear();
        let report = check(source.as_bytes(), CheckOptions { capabilities: Some(&caps) });
        let found = |code: &str, name: &str| {
            report.layer(Layer::Adapter).filter(|d| d.code == code && d.message.contains(name)).count()
        };
        // `other` is not a state cell, and is both read and excluded.
        assert_eq!(found(codes::A_CONTRADICTION, "`other`"), 1);
        // `cwd`, listed twice, is neither read nor excluded; `task` is read.
        assert_eq!(found(codes::A_UNCOVERED, "`cwd`"), 2);
        assert_eq!(found(codes::A_UNCOVERED, "`task`"), 0);
    }
}

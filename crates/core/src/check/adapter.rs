//! The adapter layer: the contract against a host's capabilities, in both directions for
//! provider reads. With a profile that requires them, also the required blocks, question
//! ids and full frame coverage (the reference's "frame layer").

use std::collections::HashMap;

use super::Capabilities;
use super::problem::CheckProblem;
use crate::contract::{Block, Contract};
use crate::diag::{self, Diagnostic, Span};
use crate::names::NameSet;
use crate::vocab::{self, ANY_POSITION_ACTION};

/// The diagnostics' destination, and the block being checked.
struct Sink<'a, 'o> {
    out: &'o mut dyn diag::Sink,
    block: Option<&'a str>,
}

impl Sink<'_, '_> {
    /// Reports `problem` at `span`, in the block being checked (its id left out when the
    /// diagnostic is only counted: see [`diag::Sink::keeps`]).
    fn push(&mut self, problem: CheckProblem<'_>, span: Span) {
        self.out.report(&problem, span, self.block);
    }
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
            let blocks = contract.blocks.iter().map(|b| b.id.as_str()).collect::<Vec<_>>();
            let problem = CheckProblem::BlockMissing { required, blocks: &blocks };
            sink.push(problem, Span { line: 1, column: 1, start: 0, end: 0 });
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
        let problem = CheckProblem::Position {
            position: &block.position,
            when_line: block.when_span.line,
            registered: &positions,
        };
        sink.push(problem, block.span);
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
            let problem =
                CheckProblem::Action { action: &rule.action, rule_line: rule.span.line, registered: &caps.actions };
            sink.push(problem, block.span);
            // Without a handler it is handled nowhere: the position need not say so again.
            continue;
        }
        if let Some(handled) = position_actions
            && rule.action != ANY_POSITION_ACTION
            && !handled.contains(&rule.action)
        {
            let problem = CheckProblem::ActionAtPosition {
                position: &block.position,
                action: &rule.action,
                rule_line: rule.span.line,
                handled,
            };
            sink.push(problem, block.span);
        }
    }
    if let Some(dynamic) = &block.dynamic
        && !dynamic.provider.is_empty()
    {
        let provider = &dynamic.provider;
        if !caps.dynamic_providers.contains(provider) {
            let problem = CheckProblem::Provider {
                provider,
                dynamic_line: dynamic.span.line,
                registered: &caps.dynamic_providers,
            };
            sink.push(problem, block.span);
        }
        match caps.dynamic_provider_reads.get(provider) {
            None => sink.push(
                CheckProblem::ProviderReadsMissing { provider, reads: &dynamic.reads, dynamic_line: dynamic.span.line },
                block.span,
            ),
            Some(host_reads) => {
                let less: Vec<&str> =
                    dynamic.reads.iter().filter(|c| !host_reads.contains(c)).map(String::as_str).collect();
                let more: Vec<&str> =
                    host_reads.iter().filter(|c| !dynamic.reads.contains(c)).map(String::as_str).collect();
                if !less.is_empty() {
                    sink.push(CheckProblem::ProviderReadsLess { provider, less: &less, host_reads }, block.span);
                }
                if !more.is_empty() {
                    sink.push(CheckProblem::ProviderReadsMore { provider, more: &more, host_reads }, block.span);
                }
            }
        }
    }
    if let Some(frame) = &block.frame {
        for field in &frame.fields {
            match &field.projection {
                Some(p) if !projections.is_registered(p) => {
                    sink.push(CheckProblem::Projection { projection: p, registered: &caps.projections }, field.span);
                }
                Some(_) => {}
                None => {
                    if let Some(index) = cell_index
                        && index.position(&field.key).is_none()
                    {
                        sink.push(CheckProblem::StateCell { field: &field.key, cells: index.cells }, field.span);
                    }
                }
            }
            if caps.require_coverage && field.why.is_empty() {
                sink.push(CheckProblem::FieldNoWhy { field: &field.key }, field.span);
            }
        }
        for exclusion in &frame.excluded {
            if let Some(index) = cell_index
                && index.position(&exclusion.field).is_none()
            {
                sink.push(
                    CheckProblem::ExclusionUnknown { cell: &exclusion.field, cells: index.cells },
                    exclusion.span,
                );
            }
            if caps.require_coverage && exclusion.why.is_empty() {
                sink.push(CheckProblem::ExclusionNoWhy { cell: &exclusion.field }, exclusion.span);
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
            sink.push(CheckProblem::QuestionIds { block: &block.id, expected, actual: &actual }, block.span);
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
            sink.push(CheckProblem::Contradiction { cell: &exclusion.field }, exclusion.span);
        }
        if let Some(mark) = at.and_then(|at| marks.get_mut(at)) {
            *mark |= EXCLUDED;
        }
    }
    for (cell, first) in cells.cells.iter().zip(&cells.first) {
        if marks.get(*first).is_some_and(|mark| *mark == 0) {
            sink.push(CheckProblem::Uncovered { cell }, frame.span);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check};
    use crate::diag::{Layer, codes};

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

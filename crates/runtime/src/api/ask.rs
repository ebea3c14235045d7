//! `decision ask --format json`: one block's decision as the provider answered it.

use decision_core::contract::Block;
use serde_json::{Map, Value, json};

use super::error::{Code, Error};
use crate::decide::NodeDecision;
use decision_protocol::frame::{
    FrameArtifact, FrameSpec, HostCells, Mode, Projections, compile_frame, reference_node_id,
};

/// The block's frame compiled from the host cells with the standard projections (provenance
/// mode), against the reference host's cells unless `host_cells` is given; `None` for a block
/// without `frame:`. A frame that reads what the host does not have is [`Code::Frame`].
pub fn compile(
    block: &Block,
    cells: &Map<String, Value>,
    host_cells: Option<HostCells>,
) -> Result<Option<FrameArtifact>, Error> {
    if block.frame.is_none() {
        return Ok(None);
    }
    let (node, host_cells) = match host_cells {
        Some(host_cells) => (block.id.as_str(), host_cells),
        None => (reference_node_id(&block.id).unwrap_or(&block.id), HostCells::reference()),
    };
    let projections = Projections::standard();
    let spec = FrameSpec::from_block(node, block, &host_cells, &projections)
        .map_err(|e| Error::new(Code::Frame, super::frame::in_block(&block.id, &e)))?;
    Ok(Some(compile_frame(&spec, cells, &host_cells, &projections, Mode::Provenance)))
}

/// `block`, `node`, `provider`, `model`, `valid`, `problems`, `answers` (as received),
/// `action`, `reason`, `rule`, `margin`, `degraded`, `warnings`, `requestDigest`, `latencyMs`.
pub fn document(block: &str, d: &NodeDecision) -> Value {
    json!({
        "block": block,
        "node": d.id,
        "provider": d.provider,
        "model": d.model,
        "valid": d.valid,
        "problems": d.problems,
        "answers": d.raw_answers,
        "action": d.action,
        "reason": d.reason,
        "rule": d.rule,
        "margin": super::eval::margin_json(d.margin.as_ref()),
        "degraded": d.degraded,
        "warnings": d.warnings,
        "requestDigest": d.request_digest,
        "latencyMs": d.latency_ms,
    })
}

/// What `decision ask` prints without `--format json`.
pub fn text(d: &NodeDecision) -> String {
    let model = d.model.as_deref().unwrap_or("-");
    let mut out = format!("{}: {} (provider {}, model {model}, {} ms)\n", d.id, d.action, d.provider, d.latency_ms);
    out.push_str(&format!("  reason: {}\n", d.reason));
    if let Some(m) = &d.margin {
        out.push_str(&format!(
            "  margin: {:.4} ({} = {} against threshold {})\n",
            m.margin, m.question, m.value, m.threshold
        ));
    }
    for (id, answer) in &d.raw_answers {
        out.push_str(&format!("  answer {id}: {answer}\n"));
    }
    for problem in &d.problems {
        out.push_str(&format!("  invalid: {problem}\n"));
    }
    for warning in &d.warnings {
        out.push_str(&format!("  warning: {warning}\n"));
    }
    out
}

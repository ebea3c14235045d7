//! `decision what-if LOG... --contract NEW.md [--gate block.question=value]... [--format json]`:
//! re-evaluate every recorded decision's policy under another contract or other thresholds,
//! on the recorded answers, and list each decision whose action would change. No model is
//! asked. Exit 0 when the report was produced (whatever it says), 2 on usage or input errors.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::api::what_if::{WhatIfRequest, read_log};
use decision::log::what_if::WhatIfReport;

use super::contract_input::Format;
use super::contract_input::load_contract;
use decision::api::Error;
use decision::terminal::one_line as safe;

#[derive(clap::Args)]
pub struct Args {
    /// Session logs whose decisions to re-evaluate.
    #[arg(required = true, value_name = "LOG")]
    logs: Vec<PathBuf>,
    /// The contract to evaluate them under.
    #[arg(long, value_name = "NEW.md")]
    contract: PathBuf,
    /// The gates: the options every entrance takes.
    #[command(flatten)]
    request: WhatIfRequest,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub fn run(args: Args) -> ExitCode {
    match report(&args) {
        Ok(report) => {
            match args.format {
                Format::Json => println!("{}", serde_json::to_value(&report).unwrap_or_default()),
                Format::Human => print!("{}", to_text(&report)),
            }
            ExitCode::SUCCESS
        }
        Err(error) => super::fail(&error),
    }
}

fn report(args: &Args) -> Result<WhatIfReport, Error> {
    let contract = load_contract(&args.contract)?;
    let what_if = args.request.prepare(&contract, &args.contract.display().to_string())?;
    let mut report = WhatIfReport::default();
    for path in &args.logs {
        let shown = path.display().to_string();
        let file = crate::progress::Watched::open(path, "comparing", false)
            .map_err(|e| Error::io(&shown, format!("cannot read {shown}: {e}")))?;
        read_log(&what_if, &shown, file, &mut report)?;
    }
    Ok(report)
}

fn to_text(report: &WhatIfReport) -> String {
    let mut out = String::new();
    for c in &report.changes {
        let step = c.at.step.map_or_else(|| "?".to_string(), |s| s.to_string());
        let margin = c.margin.map_or_else(String::new, |m| format!("  margin {m:.4}"));
        out.push_str(&format!(
            "{}:{}  run {}  step {}  {}  {} → {}  ({}){}\n",
            safe(&c.at.log),
            c.at.line,
            c.at.run,
            step,
            safe(&c.at.node),
            safe(&c.old),
            safe(&c.new),
            safe(&c.rule),
            margin
        ));
    }
    for n in &report.not_comparable_list {
        out.push_str(&format!(
            "{}:{}  run {}  {}  not comparable: {}\n",
            safe(&n.at.log),
            n.at.line,
            n.at.run,
            safe(&n.at.node),
            safe(&n.reason)
        ));
    }
    out.push_str(&format!(
        "decisions: {} · compared: {} · unchanged: {} · changed: {} · not comparable: {}{}\n",
        report.decisions,
        report.compared,
        report.unchanged,
        report.changed,
        report.not_comparable,
        if report.unreadable_lines > 0 {
            format!(" · unreadable lines: {}", report.unreadable_lines)
        } else {
            String::new()
        }
    ));
    if !report.by_block.is_empty() {
        out.push_str("by block:\n");
        for (block, s) in &report.by_block {
            out.push_str(&format!(
                "  {:<14} decisions {:>6}  changed {:>6}  not comparable {:>6}\n",
                safe(block),
                s.decisions,
                s.changed,
                s.not_comparable
            ));
        }
    }
    if !report.by_action.is_empty() {
        out.push_str("by action:\n");
        for (pair, count) in &report.by_action {
            out.push_str(&format!("  {}: {count}\n", safe(pair)));
        }
    }
    out
}

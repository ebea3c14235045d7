//! `decision test CONTRACT [TESTS...] [--format json]`: run contract test cases (no model)
//! and report pass/fail per case with a diff, and the rules no case reached. Without TESTS,
//! runs `NAME.tests.json` beside `NAME.md`. Exit 0 all passed, 1 a case failed, 2 usage or
//! unreadable input.

use std::path::PathBuf;
use std::process::ExitCode;

use decision::contract_tests::{TestFileError, TestReport, TestRunner, load_tests, tests_beside};

use super::contract_input::Format;
use super::contract_input::load_contract;
use decision::api::Error;
use decision::terminal::one_line as safe;

#[derive(clap::Args)]
pub struct Args {
    /// The DECISION.md contract under test.
    contract: PathBuf,
    /// Test files (JSON); default: NAME.tests.json beside NAME.md.
    #[arg(value_name = "TESTS")]
    tests: Vec<PathBuf>,
    /// Whose state cells a case's `state` holds: the reference coding host's 11 cells, or
    /// the keys of each case's state (trusted unless named by `--untrusted`).
    #[arg(long, value_enum, default_value_t = decision::api::ask::Cells::Reference)]
    cells: decision::api::ask::Cells,
    /// A host capability report (JSON): its `stateCells` are the cells a case's `state`
    /// holds, and a case on a block that does not fit the host fails.
    #[arg(long, value_name = "FILE.json", conflicts_with = "cells")]
    capabilities: Option<PathBuf>,
    /// With `--cells state` or `--capabilities`: a cell that carries untrusted bytes; repeatable.
    #[arg(long, value_name = "CELL")]
    untrusted: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub fn run(args: Args) -> ExitCode {
    let report = match report(&args) {
        Ok(report) => report,
        Err(error) => return super::fail(&error),
    };
    match args.format {
        Format::Json => println!("{}", serde_json::to_value(&report).unwrap_or_default()),
        Format::Human => print!(
            "{}",
            to_text(&report, args.cells == decision::api::ask::Cells::Reference && args.capabilities.is_none())
        ),
    }
    if report.ok() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

fn report(args: &Args) -> Result<TestReport, Error> {
    let contract = load_contract(&args.contract)?;
    let files = if args.tests.is_empty() {
        let beside = tests_beside(&args.contract);
        if !beside.is_file() {
            let missing = TestFileError::NotFound {
                path: args.contract.display().to_string(),
                expected: beside.display().to_string(),
            };
            return Err(Error::io(&beside.display().to_string(), missing.to_string()));
        }
        vec![beside]
    } else {
        args.tests.clone()
    };
    let capabilities = args.capabilities.as_deref().map(super::contract_input::read_capabilities).transpose()?;
    let cells = decision::api::ask::cell_source(args.cells, &args.untrusted, capabilities)?;
    let mut runner = TestRunner::new(&contract).with_cells(cells);
    for file in &files {
        let tests = load_tests(file).map_err(|e| match e {
            TestFileError::Json { .. } => Error::usage(e.to_string()).at_path(&file.display().to_string()),
            _ => Error::io(&file.display().to_string(), e.to_string()),
        })?;
        runner.run_file(&file.display().to_string(), &tests);
    }
    Ok(runner.finish())
}

fn to_text(report: &TestReport, reference: bool) -> String {
    let mut out = String::new();
    for case in &report.cases {
        let verdict = if case.passed { "ok  " } else { "FAIL" };
        out.push_str(&format!("{verdict} {} · {}\n", safe(&case.block), safe(&case.name)));
        for line in &case.diff {
            out.push_str(&format!("       {}\n", safe(line)));
        }
    }
    out.push_str(&format!("{} passed, {} failed\n", report.passed, report.failed));
    if reference && report.cases.iter().flat_map(|c| &c.diff).any(|d| d.contains("the reference coding host's cells")) {
        out.push_str(
            "note: frames were compiled against the reference coding host's cells; a host with its own cells \
             gives `--cells state` (the keys of each case's state) or `--capabilities FILE.json`\n",
        );
    }
    out.push_str("rule coverage:\n");
    for block in &report.coverage {
        out.push_str(&format!("  {:<14} {}/{} rules\n", safe(&block.block), block.covered, block.rules));
        for rule in &block.uncovered {
            out.push_str(&format!("    not reached: line {}: {}\n", rule.line, safe(&rule.rule)));
        }
    }
    out
}

//! Group commit in the session log: what is in the file after a commit, what a crash between
//! commits loses, how the fsync policies write held lines, that records written straight into
//! a line are byte for byte their event objects' JSON, and that in the coding host a tool, a
//! person and generation act only once everything recorded before them is on disk.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod host_common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use decision_coding_host::generate::{EvidenceReport, GenerateError, GenerateRequest, Generated, Generator};
use decision_coding_host::heuristic::HeuristicProvider;
use decision_coding_host::human::Human;
use decision_coding_host::{CODING_CONTRACT, Collaborators, RunConfig, RunSummary, run_task};
use decision_core::policy::Margin;
use decision_protocol::digest::stringify;
use decision_protocol::frame::{Absent, FieldRef, FixedList, FrameArtifact, Mode, StateText, Truncation, Unfilled};
use decision_runtime::decide::NodeDecision;
use decision_runtime::graph::{EventSink, FnSink, MemorySink, Tee};
use decision_runtime::log::{
    ChainStatus, DecisionEvent, FsyncPolicy, GraphEvent, LogHeader, LogReport, NO_CONSUMER, NodeDecisionEvent,
    ReplayOptions, SessionLog, replay_reader,
};
use host_common::TempDir;
use serde_json::{Map, Value, json};

fn header() -> LogHeader {
    LogHeader { id: "commit-test".into(), created_at_ms: 7, cwd: Some("/w".into()) }
}

fn create(path: &Path, policy: FsyncPolicy) -> SessionLog {
    let mut log = SessionLog::create(path, &header(), policy).unwrap().with_group_commit();
    log.set_clock(|| 1_000);
    log
}

fn event(n: u64) -> Map<String, Value> {
    json!({"n": n, "text": format!("line {n} — ünïcode \"quoted\"\n")}).as_object().unwrap().clone()
}

/// The file's lines, asserting that it holds only whole lines.
fn whole_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "the file ends inside a line: {text:?}");
    text.lines().map(str::to_owned).collect()
}

/// Replays the log and asserts that every line was read and the chain is intact.
fn replays_intact(path: &Path) -> LogReport {
    let report = replay_reader(File::open(path).unwrap(), &ReplayOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(report.skipped_lines, 0, "{report:?}");
    assert!(report.torn_tail.is_none(), "{report:?}");
    assert!(matches!(report.chain_status(), ChainStatus::Intact), "{report:?}");
    report
}

fn n_of(line: &str) -> u64 {
    let v: Value = serde_json::from_str(line).unwrap();
    v["e"]["n"].as_u64().unwrap()
}

#[test]
fn commit_writes_exactly_the_lines_appended_so_far() {
    let dir = TempDir::new("commit-exact");
    let path = dir.path().join("log.jsonl");
    let mut log = create(&path, FsyncPolicy::Never);
    assert_eq!(whole_lines(&path).len(), 1, "the header is written when the log is created");
    for n in 0..3 {
        log.append_owned("note", event(n)).unwrap();
    }
    assert_eq!(whole_lines(&path).len(), 1, "appended lines wait for the commit");
    assert!(log.held_bytes() > 0);
    log.commit().unwrap();
    assert_eq!(log.held_bytes(), 0);
    let lines = whole_lines(&path);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1..].iter().map(|l| n_of(l)).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(replays_intact(&path).other_events, 3);
    // A commit with nothing held writes nothing.
    let before = std::fs::read(&path).unwrap();
    log.commit().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn group_commit_writes_the_same_bytes_as_a_write_per_line() {
    let dir = TempDir::new("commit-same-bytes");
    let grouped = dir.path().join("grouped.jsonl");
    let direct = dir.path().join("direct.jsonl");
    let mut a = create(&grouped, FsyncPolicy::Never);
    let mut b = SessionLog::create(&direct, &header(), FsyncPolicy::Never).unwrap();
    b.set_clock(|| 1_000);
    for n in 0..5 {
        a.append_owned("note", event(n)).unwrap();
        b.append_owned("note", event(n)).unwrap();
        assert_eq!(whole_lines(&direct).len() as u64, n + 2, "without group commit every line is written at once");
        if n == 2 {
            a.commit().unwrap();
        }
    }
    drop(a);
    drop(b);
    assert_eq!(std::fs::read(&grouped).unwrap(), std::fs::read(&direct).unwrap());
}

#[test]
fn a_crash_between_commits_loses_only_whole_uncommitted_lines_and_the_log_still_verifies() {
    let dir = TempDir::new("commit-crash");
    let path = dir.path().join("log.jsonl");
    let mut log = create(&path, FsyncPolicy::Never);
    log.append_owned("note", event(0)).unwrap();
    log.append_owned("note", event(1)).unwrap();
    log.commit().unwrap();
    log.append_owned("note", event(2)).unwrap();
    log.append_owned("note", event(3)).unwrap();
    // The process dies: nothing runs after this point, not even the log's drop.
    std::mem::forget(log);
    let lines = whole_lines(&path);
    assert_eq!(lines[1..].iter().map(|l| n_of(l)).collect::<Vec<_>>(), [0, 1], "the committed lines, whole");
    assert_eq!(replays_intact(&path).other_events, 2);
    // The log reopens and its chain continues from the last line on disk. (The forgotten log
    // still holds its lock in this process — a dead process holds none — so the file it left
    // is reopened under another name.)
    let left = dir.path().join("left.jsonl");
    std::fs::copy(&path, &left).unwrap();
    let path = left;
    let mut reopened = SessionLog::open(&path, FsyncPolicy::Never).unwrap().with_group_commit();
    reopened.append_owned("note", event(4)).unwrap();
    drop(reopened);
    let lines = whole_lines(&path);
    assert_eq!(lines[1..].iter().map(|l| n_of(l)).collect::<Vec<_>>(), [0, 1, 4]);
    let last: Value = serde_json::from_str(&lines[3]).unwrap();
    assert_eq!(last["seq"], 3);
    assert_eq!(replays_intact(&path).other_events, 3);
}

#[test]
fn dropping_the_log_commits_its_held_lines() {
    let dir = TempDir::new("commit-drop");
    let path = dir.path().join("log.jsonl");
    let mut log = create(&path, FsyncPolicy::Never);
    log.append_owned("note", event(0)).unwrap();
    log.append_owned("note", event(1)).unwrap();
    drop(log);
    assert_eq!(whole_lines(&path).len(), 3);
    replays_intact(&path);
}

#[test]
fn turning_group_commit_off_commits_what_is_held() {
    let dir = TempDir::new("commit-off");
    let path = dir.path().join("log.jsonl");
    let mut log = create(&path, FsyncPolicy::Never);
    log.append_owned("note", event(0)).unwrap();
    log.set_group_commit(false).unwrap();
    assert!(!log.group_commit());
    assert_eq!(whole_lines(&path).len(), 2);
    log.append_owned("note", event(1)).unwrap();
    assert_eq!(whole_lines(&path).len(), 3, "written as it is appended");
    std::mem::forget(log);
    replays_intact(&path);
}

#[test]
fn a_due_sync_writes_the_held_lines_first() {
    let dir = TempDir::new("commit-sync");
    // Every line: nothing is ever held.
    let every_line = dir.path().join("every-line.jsonl");
    let mut log = create(&every_line, FsyncPolicy::EveryLine);
    log.append_owned("note", event(0)).unwrap();
    assert_eq!(log.held_bytes(), 0);
    assert_eq!(whole_lines(&every_line).len(), 2);
    std::mem::forget(log);
    // Every third line, the header counted: held until the second append.
    let every_three = dir.path().join("every-three.jsonl");
    let mut log = create(&every_three, FsyncPolicy::Every(3));
    log.append_owned("note", event(0)).unwrap();
    assert_eq!(whole_lines(&every_three).len(), 1);
    log.append_owned("note", event(1)).unwrap();
    assert_eq!(whole_lines(&every_three).len(), 3, "the sync wrote the held lines");
    assert_eq!(log.held_bytes(), 0);
    log.append_owned("note", event(2)).unwrap();
    assert_eq!(whole_lines(&every_three).len(), 3);
    // An explicit sync writes what is held too.
    log.append_owned("note", event(3)).unwrap();
    log.sync().unwrap();
    assert_eq!(whole_lines(&every_three).len(), 5);
    assert_eq!(log.held_bytes(), 0);
    std::mem::forget(log);
    replays_intact(&every_three);
}

#[test]
fn held_lines_past_the_cap_are_written_without_a_commit() {
    let dir = TempDir::new("commit-cap");
    let path = dir.path().join("log.jsonl");
    let mut log = create(&path, FsyncPolicy::Never);
    let big = json!({"text": "x".repeat(100_000)}).as_object().unwrap().clone();
    for _ in 0..11 {
        log.append_owned("note", big.clone()).unwrap();
    }
    assert!(log.held_bytes() <= 1 << 20, "{}", log.held_bytes());
    assert!(whole_lines(&path).len() > 1, "held lines past the cap were written");
    std::mem::forget(log);
    replays_intact(&path);
}

#[test]
fn an_event_payload_is_written_as_its_typed_event_object() {
    let dir = TempDir::new("commit-payload");
    let path = dir.path().join("log.jsonl");
    let mut log = create(&path, FsyncPolicy::Never);
    let payloads = [
        json!({"a": 1, "type": "ignored", "b": [1.5, "x\u{0}y", null, {"2": 1, "1": 2}]}),
        // Integer-like keys come before `type` in JSON.stringify's order.
        json!({"z": true, "10": "ten", "2": "two"}),
        json!({"type": "note", "already": "typed"}),
        json!({}),
    ];
    for payload in &payloads {
        log.append_event("note", payload.as_object().unwrap()).unwrap();
    }
    drop(log);
    let lines = whole_lines(&path);
    for (payload, line) in payloads.iter().zip(&lines[1..]) {
        let mut expected = Map::new();
        expected.insert("type".into(), json!("note"));
        expected.extend(
            payload.as_object().unwrap().iter().filter(|(k, _)| *k != "type").map(|(k, v)| (k.clone(), v.clone())),
        );
        assert_eq!(event_bytes(line), stringify(&Value::Object(expected)));
    }
}

/// The `e` member of an envelope line, as written.
fn event_bytes(line: &str) -> &str {
    let start = line.find(",\"e\":").unwrap() + 5;
    let end = line.rfind(",\"seq\":").unwrap();
    &line[start..end]
}

fn frame(mode: Mode) -> FrameArtifact {
    let state = json!({
        "task": "Find \"it\"", "files": ["a.py", "b\tc.py"], "last": "", "items": [], "count": 3,
        "nested": {"7": "seven", "k": [1, 2.25, -0.0, 1e21], "m": {"x": 1, "y": [{"p": 1, "q": 2}]}},
    });
    FrameArtifact {
        node: "loop.step".into(),
        state: Arc::new(state.as_object().unwrap().clone()),
        digest: "0123456789abcdef".into(),
        fields: Arc::new(FixedList::new(
            ["task", "files", "last", "items", "count", "nested"]
                .iter()
                .map(|k| FieldRef { key: (*k).into(), from: format!("cell_{k}\u{7f}\"") })
                .collect(),
        )),
        untrusted: vec![
            "files".into(),
            "last".into(),
            "items".into(),
            "nested".into(),
            "missing".into(),
            "gone".into(),
        ],
        truncated: vec![Truncation { key: "files".into(), from: 40, to: 15 }],
        unfilled: vec![Unfilled { key: "gone".into(), from: "gone_cell".into(), why: "no such cell".into() }],
        absent: vec![Absent { key: "other".into(), why: "not applicable".into() }],
        state_text: StateText::default(),
        excluded: Arc::new(FixedList::new(vec![
            ("secret".into(), "never shown".into()),
            ("cwd".into(), "路径不进判定\n\u{2028}".into()),
        ])),
        mode,
    }
}

fn decisions() -> Vec<NodeDecision> {
    let plain = NodeDecision::by_code("loop.isDone", 3, "finish", "done by code");
    let mut full = NodeDecision::by_code("loop.pickTool", 4, "call", "rule 2: tool = read_file");
    full.batch_ids = vec!["loop.needsTool".into(), "loop.pickTool".into()];
    full.sent_frame_digest = "fedcba9876543210".into();
    full.request_digest = "00ff00ff00ff00ff".into();
    full.state = Arc::new(json!({"task": "t", "3": "integer-like key first"}).as_object().unwrap().clone());
    full.sent_questions = json!({"tool": {"type": "choice", "criteria": {"read_file": "read it"}}}).into();
    full.questions = json!({"tool": {"type": "choice"}}).into();
    full.raw_answers = json!({"tool": {"type": "choice", "choice": "read_file", "probabilities": {"read_file": 0.9}}})
        .as_object()
        .unwrap()
        .clone();
    full.margin = Some(Margin { question: "tool".into(), kind: "probGte", threshold: 0.5, value: 0.9, margin: 0.4 });
    full.provider = "heuristic".into();
    full.model = Some("model-x".into());
    full.latency_ms = 12;
    full.degraded = true;
    full.escalate = true;
    full.warnings = vec!["slow".into(), "retried \"once\"".into()];
    let mut not_a_number = full.clone();
    not_a_number.margin =
        Some(Margin { question: "tool".into(), kind: "probGte", threshold: f64::NAN, value: 1e-7, margin: -0.0 });
    not_a_number.state = Arc::new(Map::new());
    // A node asked alone: it sent its own frame's state and its own questions, whose text the
    // record copies instead of writing it again.
    let mut alone = full.clone();
    alone.state = frame(Mode::Reference).state;
    alone.questions = Arc::clone(&alone.sent_questions);
    // Equal as values to the frame's state, but with its members in another order (at the
    // top, or inside a value): each is written as it is ordered.
    let mut reordered = alone.clone();
    let mut members: Vec<(String, Value)> = Arc::unwrap_or_clone(frame(Mode::Reference).state).into_iter().collect();
    members.reverse();
    reordered.state = Arc::new(members.into_iter().collect());
    let mut nested = alone.clone();
    Arc::make_mut(&mut nested.state)["nested"]["m"]["y"][0] = json!({"q": 2, "p": 1});
    vec![plain, full, not_a_number, alone, reordered, nested]
}

#[test]
fn a_decision_record_is_written_as_its_event_object() {
    let evidence = json!(["list_dir(.) → a.py", "read_file(a.py) → …"]);
    let decisions = decisions();
    let mut seen = 0;
    for decision in &decisions {
        for frame in [None, Some(frame(Mode::Reference)), Some(frame(Mode::Provenance))] {
            for evidence in [None, Some(&evidence)] {
                let record = NodeDecisionEvent {
                    decision,
                    frame: frame.clone(),
                    node: "step",
                    block: "pick_tool",
                    position: "act",
                    state_version: 9,
                    evidence,
                };
                let mut written = String::new();
                record.write_to(&mut written);
                assert_eq!(written, stringify(&Value::Object(record.into_event())));
                seen += 1;
            }
        }
    }
    assert_eq!(seen, 36);
}

#[test]
fn a_frame_s_kept_state_text_is_used_only_for_the_state_it_was_written_from() {
    let decisions = decisions();
    let base = &decisions[1];
    for mode in [Mode::Reference, Mode::Provenance] {
        let mut frame = frame(mode);
        frame.state_text = StateText::written(&frame.state);
        // The decision sent the frame's own state (a node asked alone), or another one.
        let mut alone = base.clone();
        alone.state = Arc::clone(&frame.state);
        let mut other = base.clone();
        Arc::make_mut(&mut other.state).insert("extra".into(), json!(1));
        // A frame whose state was replaced after its text was written.
        let mut replaced = frame.clone();
        Arc::make_mut(&mut replaced.state).insert("late".into(), json!("added"));
        assert_eq!(replaced.state_text.of(&replaced.state), None);
        assert!(frame.state_text.of(&frame.state).is_some());
        for (decision, frame) in [(&alone, &frame), (&other, &frame), (&alone, &replaced), (&other, &replaced)] {
            let record = NodeDecisionEvent {
                decision,
                frame: Some(frame.clone()),
                node: "step",
                block: "pick_tool",
                position: "act",
                state_version: 3,
                evidence: None,
            };
            let mut written = String::new();
            record.write_to(&mut written);
            assert_eq!(written, stringify(&Value::Object(record.into_event())));
        }
    }
}

#[test]
fn a_decision_event_is_written_as_its_value() {
    for decision in &decisions() {
        for frame in [None, Some(frame(Mode::Provenance).into_value())] {
            let event: DecisionEvent = decision.to_event(frame);
            let mut written = String::new();
            event.write_to(&mut written);
            assert_eq!(written, stringify(&event.to_value()));
        }
    }
}

fn config(workdir: &Path, audit: PathBuf, task: &str, allow_delete: bool) -> RunConfig {
    RunConfig { max_steps: 12, allow_delete, contract_label: "test".into(), ..RunConfig::new(task, workdir, audit) }
}

/// Counts the events recorded so far; it follows the log in a tee, so at any moment the log
/// has recorded exactly this many events.
fn counter() -> (Arc<AtomicUsize>, Box<dyn EventSink>) {
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    (
        count,
        Box::new(FnSink(move |_: &str, _: &Map<String, Value>| {
            seen.fetch_add(1, Ordering::SeqCst);
        })),
    )
}

/// What was on disk when a side effect happened: the side effect, the log's lines and the
/// number of events recorded by then.
type Snapshot = (String, Vec<String>, usize);

#[derive(Clone, Default)]
struct Snapshots(Arc<Mutex<Vec<Snapshot>>>);

impl Snapshots {
    fn take(&self, what: &str, log: &Path, count: &AtomicUsize) {
        let lines = whole_lines(log);
        self.0.lock().unwrap().push((what.to_owned(), lines, count.load(Ordering::SeqCst)));
    }

    /// Asserts that at each side effect every event recorded before it was on disk, and
    /// returns the snapshots.
    fn all_on_disk(&self) -> Vec<Snapshot> {
        let snapshots = self.0.lock().unwrap().clone();
        for (what, lines, recorded) in &snapshots {
            assert_eq!(lines.len(), recorded + 1, "{what}: the header and every recorded event are on disk");
        }
        snapshots
    }
}

struct SnapshotHuman {
    log: PathBuf,
    count: Arc<AtomicUsize>,
    snapshots: Snapshots,
}

impl Human for SnapshotHuman {
    fn authorize(&mut self, tool: &str, _target: &str, _reason: &str) -> bool {
        self.snapshots.take(&format!("authorize {tool}"), &self.log, &self.count);
        true
    }
}

struct SnapshotGenerator {
    log: PathBuf,
    count: Arc<AtomicUsize>,
    snapshots: Snapshots,
}

impl Generator for SnapshotGenerator {
    fn name(&self) -> &str {
        "snapshot"
    }
    fn generate(&self, request: &GenerateRequest<'_>) -> Result<Generated, GenerateError> {
        self.snapshots.take("generate", &self.log, &self.count);
        EvidenceReport.generate(request)
    }
}

/// The last `decision` line among `lines`, parsed.
fn last_decision(lines: &[String]) -> Value {
    let line = lines.iter().rev().find(|l| l.contains("\"e\":{\"type\":\"decision\"")).unwrap();
    serde_json::from_str::<Value>(line).unwrap()["e"].clone()
}

fn run_with_snapshots(
    dir: &TempDir,
    workdir: &Path,
    task: &str,
    allow_delete: bool,
) -> (RunSummary, Snapshots, PathBuf, Arc<AtomicUsize>) {
    let log_path = dir.path().join("session.jsonl");
    let log = create(&log_path, FsyncPolicy::Never);
    let (count, counting) = counter();
    let snapshots = Snapshots::default();
    let human = Box::new(SnapshotHuman { log: log_path.clone(), count: count.clone(), snapshots: snapshots.clone() });
    let generator =
        Box::new(SnapshotGenerator { log: log_path.clone(), count: count.clone(), snapshots: snapshots.clone() });
    let with = Collaborators {
        provider: Arc::new(HeuristicProvider),
        generator,
        human,
        sink: Box::new(Tee::new(vec![Box::new(log), counting])),
    };
    let summary = run_task(
        CODING_CONTRACT.as_bytes(),
        &config(workdir, dir.path().join("audit.jsonl"), task, allow_delete),
        with,
        None,
    )
    .unwrap();
    (summary, snapshots, log_path, count)
}

#[test]
fn a_person_is_asked_and_generation_starts_only_once_everything_before_is_on_disk() {
    let dir = TempDir::new("commit-human");
    let ws = dir.workspace(&[("keep.txt", "precious"), ("other.txt", "also precious")]);
    let (summary, snapshots, log, count) = run_with_snapshots(&dir, &ws, "Delete keep.txt", true);
    assert!(summary.delivered, "{summary:?}");
    assert!(!ws.join("keep.txt").exists(), "the approved delete ran");
    let snapshots = snapshots.all_on_disk();
    let whats: Vec<&str> = snapshots.iter().map(|(w, _, _)| w.as_str()).collect();
    assert_eq!(whats, ["authorize delete_file", "generate"]);
    // The person was asked after the gate's decision to ask them was on disk.
    let gate = last_decision(&snapshots[0].1);
    assert_eq!((gate["block"].as_str(), gate["action"].as_str()), (Some("grade_risk"), Some("ask_human")));
    // At the run's end everything is on disk: the header, every event and the seal.
    assert_eq!(whole_lines(&log).len(), count.load(Ordering::SeqCst) + 2);
    replays_intact(&log);
}

#[test]
fn a_tool_runs_only_once_its_decision_is_on_disk() {
    let dir = TempDir::new("commit-tool");
    let ws = dir.workspace(&[("probe.py", "def value_5():\n    return 5\n")]);
    // The tools never block (a FIFO is refused, not waited on), so the moment the call has run
    // is taken from the events: when its result is recorded, the log on disk must already hold
    // everything up to the call, and the result not yet (the tool ran in between).
    let log_path = dir.path().join("session.jsonl");
    let count = Arc::new(AtomicUsize::new(0));
    let snapshots = Snapshots::default();
    let probe = {
        let (log_path, count, snapshots) = (log_path.clone(), count.clone(), snapshots.clone());
        Box::new(FnSink(move |event: &str, payload: &Map<String, Value>| {
            if event == "tool:result" && payload.get("tool").and_then(Value::as_str) == Some("read_file") {
                snapshots.take("read_file", &log_path, &count);
            }
            count.fetch_add(1, Ordering::SeqCst);
        }))
    };
    let log = create(&log_path, FsyncPolicy::Never);
    let with = Collaborators {
        provider: Arc::new(HeuristicProvider),
        generator: Box::new(EvidenceReport),
        human: Box::new(decision_coding_host::human::DenyAll),
        sink: Box::new(Tee::new(vec![Box::new(log), probe])),
    };
    // The task names the file, so that it is read rather than searched (a search reads only
    // regular files, and never a FIFO).
    let task = "Which function does probe.py define?";
    let summary =
        run_task(CODING_CONTRACT.as_bytes(), &config(&ws, dir.path().join("audit.jsonl"), task, false), with, None)
            .unwrap();
    let snapshots = snapshots.all_on_disk();
    assert_eq!(snapshots.len(), 1, "the run read the probe once: {summary:?}");
    let lines = &snapshots[0].1;
    // The decision that let the call run, and the call itself, were on disk when it had run.
    let gate = last_decision(lines);
    assert_eq!((gate["block"].as_str(), gate["action"].as_str()), (Some("grade_risk"), Some("auto")));
    let call: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(call["e"]["type"], "tool:call");
    assert_eq!(call["e"]["tool"], "read_file");
    assert!(summary.answer.contains("probe.py"), "{}", summary.answer);
    replays_intact(&log_path);
}

#[test]
fn every_event_of_a_host_run_is_written_as_its_event_object() {
    let dir = TempDir::new("commit-bytes");
    let files: Vec<(String, String)> = (0..6)
        .map(|i| (format!("module_{i:03}.py"), format!("# module {i}\n\ndef value_{i}():\n    return {i}\n")))
        .collect();
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, b)| (n.as_str(), b.as_str())).collect();
    let ws = dir.workspace(&borrowed);
    let log_path = dir.path().join("session.jsonl");
    let memory = MemorySink::new();
    let with = Collaborators {
        provider: Arc::new(HeuristicProvider),
        generator: Box::new(EvidenceReport),
        human: Box::new(decision_coding_host::human::DenyAll),
        // The memory sink builds every event object, decisions included, as the log used to.
        sink: Box::new(Tee::new(vec![Box::new(create(&log_path, FsyncPolicy::Never)), Box::new(memory.clone())])),
    };
    let task = "Which module defines `value_5`?";
    let summary =
        run_task(CODING_CONTRACT.as_bytes(), &config(&ws, dir.path().join("audit.jsonl"), task, false), with, None)
            .unwrap();
    // Listed, and the definition found by the code index.
    assert!(summary.delivered && summary.steps >= 2, "{summary:?}");
    assert!(summary.answer.contains("`module_005.py:3`"), "{}", summary.answer);
    let lines = whole_lines(&log_path);
    let events = memory.events();
    // The header, one line per event, and the seal.
    assert_eq!(lines.len(), events.len() + 2);
    assert!(lines.last().is_some_and(|l| l.starts_with(r#"{"kind":"seal","#)), "{:?}", lines.last());
    assert!(events.iter().filter(|e| e["type"] == "decision").count() >= 9);
    for (line, event) in lines[1..].iter().zip(&events) {
        assert_eq!(event_bytes(line), stringify(event));
    }
    let report = replays_intact(&log_path);
    assert_eq!(report.mismatch, 0);
    assert!(report.verified + report.partial > 0, "{report:?}");
}

#[test]
fn the_executors_events_are_written_as_their_typed_event_objects() {
    let dir = TempDir::new("commit-graph-events");
    let path = dir.path().join("log.jsonl");
    let events = [
        GraphEvent::Decide { step: 3, id: "loop.needsTool + loop.pickTool" },
        GraphEvent::Decide { step: 0, id: "quote \" and \u{1} and ⟨⟩" },
        GraphEvent::Transition {
            node: "step",
            step: 4,
            state_version: 17,
            visit: 2,
            action: Some("call"),
            outcome: "call",
            to: Some("tool"),
        },
        // A node decided by a host phase has no action; an outcome nothing consumes is refused.
        GraphEvent::Transition {
            node: "tool",
            step: 4,
            state_version: 18,
            visit: 1,
            action: None,
            outcome: "odd \"label\"",
            to: None,
        },
    ];
    // A tee of the log and memory: the log writes each event as it is, memory gets its object.
    let memory = MemorySink::new();
    let mut tee = Tee::new(vec![Box::new(create(&path, FsyncPolicy::Never)), Box::new(memory.clone())]);
    for event in &events {
        tee.emit_graph(*event).unwrap();
    }
    drop(tee);
    let lines = whole_lines(&path);
    let objects = memory.events();
    assert_eq!((lines.len(), objects.len()), (events.len() + 1, events.len()));
    for ((event, line), object) in events.iter().zip(&lines[1..]).zip(&objects) {
        let mut expected = Map::new();
        expected.insert("type".into(), json!(event.event_type()));
        expected.extend(event.payload());
        assert_eq!(event_bytes(line), stringify(&Value::Object(expected.clone())));
        assert_eq!(object, &Value::Object(expected));
    }
    assert_eq!(objects[3]["refused"], json!(NO_CONSUMER));
    assert!(objects[3].get("to").is_none() && objects[3].get("action").is_none());
    replays_intact(&path);
}

//! Generation: the one place text is written for the user. With an OpenAI-compatible chat
//! endpoint configured, a language model writes the answer from the evidence; without one,
//! a deterministic evidence report is produced and labelled as such.

use std::time::{Duration, Instant};

use serde_json::Value;
#[cfg(feature = "http")]
use serde_json::json;
use thiserror::Error;

use super::focus::cited_lines;
use super::focus::contains_word;
use super::heuristic::TaskReading;
use decision_protocol::frame::clip;
use decision_protocol::frame::projections::evidence_window;
#[cfg(feature = "http")]
use decision_runtime::provider::parse_strict;
#[cfg(feature = "http")]
use decision_runtime::provider::{ApiKey, redact_bearer, redact_value};

/// The first line of every deterministic report: no one should mistake it for a model's answer.
pub const EVIDENCE_REPORT_LABEL: &str = "[deterministic evidence report: no language model wrote this]";

/// The instruction that asks a generator for a file's content (followed by the path). It is
/// prompt text: the host refuses to write any content that holds it.
pub const WRITE_INPUT_PROMPT: &str = "Write the complete content of the file";

/// What the generator is given.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateRequest<'a> {
    /// The user's task, as given to the run.
    pub task: &'a str,
    /// The contract's generator section (the system prompt).
    pub instructions: &'a str,
    /// One line per step: `tool(input) → result`.
    pub evidence: &'a [String],
    /// The step records `{step, tool, input, result}`.
    pub history: &'a [Value],
    /// Why the tool loop ended.
    pub halt: &'a str,
    /// Set when the delivery gate sent the previous draft back, with its reason.
    pub revise: Option<&'a str>,
    /// When the run's time budget (plus its grace) ends: a model call must finish by then.
    pub deadline: Option<Instant>,
    /// What happened, in words, when the loop did not end in success.
    pub detail: Option<&'a str>,
}

/// A generated draft.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The draft put to the delivery gate (and, for a write, the file's content).
    pub text: String,
    /// How long the generator took, wall clock; the run logs it as `latencyMs`.
    pub latency: Duration,
    /// Prompt tokens as the endpoint reported them (`usage.prompt_tokens`); `None` when it
    /// did not say, or when no model wrote the draft.
    pub input_tokens: Option<u64>,
    /// Completion tokens as the endpoint reported them (`usage.completion_tokens`); `None`
    /// likewise.
    pub output_tokens: Option<u64>,
}

/// A generation that produced no draft. The run halts on it with `error` (resumable); the
/// `Display` text is what the run reports.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("generation failed ({who}): {message}")]
pub struct GenerateError {
    /// The generator's [`Generator::name`].
    pub who: String,
    /// What went wrong, with any API key already scrubbed from it.
    pub message: String,
}

/// Writes the answer.
pub trait Generator: Send + Sync {
    /// The name the log and error messages give this generator (`evidence-report`,
    /// `chat@HOST`).
    fn name(&self) -> &str;
    /// Whether it can write a file's content (a language model can; a report cannot, and
    /// the host never writes a report into a file).
    fn writes_content(&self) -> bool {
        true
    }
    /// Write a draft for `request`; a model call must end by `request.deadline`.
    fn generate(&self, request: &GenerateRequest<'_>) -> Result<Generated, GenerateError>;
}

/// The instruction added when the delivery gate asks for a revision.
pub fn revise_instruction(reason: &str) -> String {
    format!(
        "The previous answer did not pass the delivery gate: {reason}. Fix it accordingly; do not repeat the same wording."
    )
}

/// Offline, deterministic: quotes the evidence, and for each search term in the task, the
/// lines where it occurs (with the two lines after, which usually hold the body).
#[derive(Debug, Clone, Copy, Default)]
pub struct EvidenceReport;

impl Generator for EvidenceReport {
    fn name(&self) -> &str {
        "evidence-report"
    }

    fn writes_content(&self) -> bool {
        false
    }

    fn generate(&self, r: &GenerateRequest<'_>) -> Result<Generated, GenerateError> {
        let started = Instant::now();
        let reading = TaskReading::kept(r.task);
        let mut out = vec![EVIDENCE_REPORT_LABEL.to_owned()];
        // The answer in a sentence first, when the evidence gives one; then the evidence.
        out.extend(answer_sentence(&reading, r.history));
        out.push(format!("Task: {}", r.task));
        out.push(format!("The tool loop ended: {}.", halt_text(r.halt)));
        if let Some(reason) = r.revise {
            out.push(format!("Revision requested by the delivery gate: {reason}"));
        }
        if let Some(detail) = r.detail {
            out.push(format!("What happened: {detail}."));
        }
        for term in &reading.terms {
            out.extend(term_section(term, r.history));
        }
        if r.evidence.is_empty() {
            out.push("No tool was called, so there is no evidence to report.".into());
        } else {
            out.push("Tool results, in order:".into());
            for (i, line) in r.evidence.iter().enumerate() {
                // One line per call, so each quotation stays recognisable as one.
                out.push(format!("{}. {}", i + 1, clip(&line.replace('\n', " ⏎ "), 600)));
            }
        }
        Ok(Generated { text: out.join("\n"), latency: started.elapsed(), input_tokens: None, output_tokens: None })
    }
}

/// The answer in a sentence, from the code index's or the search's result: where a symbol
/// is defined, what it returns, its variants or fields; which files mention a term, all of
/// them, grouped by directory.
fn answer_sentence(task: &TaskReading, history: &[Value]) -> Vec<String> {
    let result_of = |tool: &str| {
        history
            .iter()
            .rev()
            .find(|h| h.get("tool").and_then(Value::as_str) == Some(tool))
            .and_then(|h| h.get("result").and_then(Value::as_str))
    };
    if task.asks_definition()
        && let (Some(term), Some(result)) = (task.terms.first(), result_of("find_definition"))
    {
        return definition_sentence(task, &task.symbol_of(term), result);
    }
    if task.search
        && let ([term], Some(result)) = (task.terms.as_slice(), result_of("search"))
    {
        let header = result.lines().next().unwrap_or_default();
        let files = super::explore::files_with_hits(result);
        if files.is_empty() || !header.contains("whole tree searched") {
            return Vec::new();
        }
        let lines = header.split_once("`: ").and_then(|(_, r)| r.split_once(' ')).map_or("", |(n, _)| n);
        let mut out = vec![format!(
            "Answer: `{term}` occurs in {} {} ({lines} matching lines, whole tree searched):",
            files.len(),
            if files.len() == 1 { "file" } else { "files" }
        )];
        // Grouped by directory, every file named.
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for file in files {
            let (dir, name) = file.rsplit_once('/').map_or((".", file.as_str()), |(d, n)| (d, n));
            let name = name.to_owned();
            match groups.iter_mut().find(|(d, _)| d == dir) {
                Some((_, names)) => names.push(name),
                None => groups.push((dir.to_owned(), vec![name])),
            }
        }
        for (dir, names) in groups {
            let names: Vec<String> =
                names.iter().map(|n| if dir == "." { n.clone() } else { format!("{dir}/{n}") }).collect();
            out.push(format!("    {}", names.join(", ")));
        }
        return out;
    }
    Vec::new()
}

/// "`json!` is defined in `src/macros.rs:54` as `macro_rules! json {`." and the like.
fn definition_sentence(task: &TaskReading, symbol: &str, result: &str) -> Vec<String> {
    let listed: Vec<&str> = result.lines().skip(1).take_while(|l| *l != "---").collect();
    // Each definition is a cited line, then its facts on an indented line.
    let mut found: Vec<(&str, &str, &str)> = Vec::new();
    for pair in listed.windows(2) {
        if let [line, facts] = pair
            && super::focus::is_cited(line)
            && facts.starts_with("    ")
            && let Some((place, signature)) = line.split_once(": ")
        {
            found.push((place, signature.trim(), facts.trim()));
        }
    }
    let header = result.lines().next().unwrap_or_default().trim_matches(['[', ']']);
    let Some((place, signature, facts)) = found.first() else {
        let coverage = header.split_once(" · ").map_or(header, |(_, c)| c);
        return vec![format!("Answer: no definition of `{symbol}` was found ({coverage}).")];
    };
    let fact = |label: &str| facts.split(" · ").find_map(|part| part.strip_prefix(label).map(str::to_owned));
    let asks = |words: &[&str]| task.words.iter().any(|w| words.contains(&w.as_str()));
    let mut out = Vec::new();
    let members =
        facts.split(" · ").find(|p| p.contains(" variants: ") || p.contains(" fields: ") || p.contains(" members: "));
    if asks(&["return", "returns"]) {
        out.push(match fact("returns ") {
            Some(returns) => format!("Answer: `{symbol}` returns {returns} (`{place}`: `{signature}`)."),
            None => {
                format!("Answer: `{symbol}` declares no return type (`{place}`: `{signature}`); its body is below.")
            }
        });
    } else if let Some(members) = members.filter(|_| asks(&["variants", "fields", "members", "many"])) {
        out.push(format!("Answer: `{symbol}` has {members} (`{place}`)."));
    } else {
        out.push(format!("Answer: `{symbol}` is defined in `{place}` as `{signature}`."));
    }
    if found.len() > 1 {
        let others: Vec<String> = found.iter().skip(1).map(|(p, s, _)| format!("`{p}` (`{s}`)")).collect();
        out.push(format!("It has {} definitions in all; the others: {}.", found.len(), others.join(", ")));
    }
    out
}

/// What the delivery gate sees of each result in its window (the `writeEvidence` projection's
/// [`evidence_window`], with its result budgets).
fn gate_view(history: &[Value]) -> Vec<String> {
    evidence_window(history)
        .map(|(h, _, budget)| clip(h.get("result").and_then(Value::as_str).unwrap_or_default(), budget))
        .collect()
}

/// What the evidence says about `term`: the cited lines of the newest step that has any,
/// within what the delivery gate sees of it (so every line the report cites is one the gate
/// can check), or what was searched and read without finding it. Absence is never claimed
/// beyond what was read.
fn term_section(term: &str, history: &[Value]) -> Vec<String> {
    let results: Vec<(&str, &str, &str)> = history
        .iter()
        .filter_map(|h| Some((h.get("tool")?.as_str()?, h.get("input")?.as_str()?, h.get("result")?.as_str()?)))
        .collect();
    for seen in gate_view(history).iter().rev() {
        let cited: Vec<&str> = cited_lines(seen).collect();
        if cited.iter().any(|l| contains_word(l, term)) {
            let mut out = vec![format!("Where `{term}` occurs:")];
            out.extend(cited.iter().take(12).map(|l| format!("    {l}")));
            return out;
        }
    }
    let mut out = Vec::new();
    let search = results.iter().rev().find(|(tool, _, _)| *tool == "search");
    if let Some((_, _, result)) = search {
        let header = result.lines().next().unwrap_or_default();
        if header.contains("whole tree searched") && header.contains(": 0 matching lines") {
            out.push(format!("`{term}` occurs in no text file of the tree: {}", header.trim_matches(['[', ']'])));
            return out;
        }
        if !header.contains(": 0 matching lines") {
            // The search found lines, and none of those in view holds the term itself: say so,
            // never that it occurs nowhere.
            out.push(format!(
                "The search found lines, and none of those shown here holds `{term}` as a word: {}",
                header.trim_matches(['[', ']'])
            ));
            return out;
        }
        out.push(format!(
            "`{term}` was not found in the part of the tree searched: {}",
            header.trim_matches(['[', ']'])
        ));
    }
    let reads: Vec<String> = results
        .iter()
        .filter(|(tool, _, _)| *tool == "read_file")
        .filter_map(|(_, _, result)| {
            result.lines().next().filter(|h| h.starts_with('[')).map(|h| h.trim_matches(['[', ']']).to_owned())
        })
        .collect();
    if reads.is_empty() && search.is_none() {
        out.push(format!("`{term}` was not looked for: no file was searched or read."));
    } else if !reads.is_empty() {
        out.push(format!("`{term}` was not found in what was read: {}.", reads.join("; ")));
    }
    out
}

/// A plain-language reading of a halt value.
pub(crate) fn halt_text(halt: &str) -> String {
    let (base, suffix) = halt.split_once('+').map_or((halt, None), |(b, s)| (b, Some(s)));
    let text = match base {
        "task_done" => "the task was judged done",
        "answered_directly" => "no tool was needed",
        "agent_done" => "the decision model chose `done`",
        "tool_unclear" => "no tool could be chosen with enough confidence",
        "unknown_tool" => "the chosen tool does not exist",
        "input_unclear" => "the tool's input could not be determined",
        "denied" => "a tool call was not authorised",
        "step_failed" => "a tool call failed",
        "max_steps" => "the step limit was reached",
        "time_budget" => "the time budget was spent",
        "write_refused" => "the write was refused",
        "not_permitted" => "the action the task asks for is not permitted in this run",
        "not_found" => "the definition the task asks about was not found",
        "unsupported" => "the answer was not supported by the evidence",
        other => other,
    };
    match suffix {
        Some(action) => format!("{text} ({halt}; the delivery gate's last action was `{action}`)"),
        None => format!("{text} ({halt})"),
    }
}

/// The largest reply body read from the chat endpoint.
#[cfg(feature = "http")]
pub const MAX_REPLY_BYTES: u64 = 8 * 1024 * 1024;

/// An OpenAI-compatible `POST {base}/chat/completions` generator.
///
/// The request is `{model, messages: [system: the contract's generator instructions, user:
/// the task, each evidence line, and on a revision the gate's reason], temperature: 0}`, with
/// `max_tokens` only when a cap is set. Every error names the generator, and the API key is
/// scrubbed from it. Needs the `http` feature (on by default).
#[cfg(feature = "http")]
#[derive(Debug, Clone)]
pub struct ChatGenerator {
    name: String,
    url: String,
    model: String,
    key: Option<ApiKey>,
    timeout: Duration,
    max_tokens: Option<u32>,
    agent: ureq::Agent,
}

#[cfg(feature = "http")]
impl ChatGenerator {
    /// `base_url` is the API root, e.g. `http://127.0.0.1:8080/v1`.
    pub fn new(base_url: &str, model: &str, key: Option<ApiKey>) -> Self {
        let base = base_url.trim_end_matches('/');
        let config = ureq::Agent::config_builder().http_status_as_error(false);
        ChatGenerator {
            name: format!("chat@{}", base.split("://").nth(1).unwrap_or(base).split('/').next().unwrap_or_default()),
            url: format!("{base}/chat/completions"),
            model: model.to_owned(),
            key,
            timeout: Duration::from_secs(120),
            max_tokens: None,
            agent: config.build().into(),
        }
    }

    /// The whole request, reply included, must finish within `timeout` (default 120 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Cap the tokens the model may write per answer (`max_tokens` in the request); without
    /// a cap the field is left out and the server's default applies.
    pub fn with_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.max_tokens = max_tokens;
        self
    }
}

#[cfg(feature = "http")]
impl Generator for ChatGenerator {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate(&self, r: &GenerateRequest<'_>) -> Result<Generated, GenerateError> {
        let started = Instant::now();
        let fail = |message: String| GenerateError { who: self.name.clone(), message };
        let mut user = format!("Task: {}\n\nEvidence (tool results, in order):\n", r.task);
        for line in r.evidence {
            user.push_str(&format!("- {line}\n"));
        }
        if let Some(reason) = r.revise {
            user.push('\n');
            user.push_str(&revise_instruction(reason));
        }
        let mut body = json!({
            "model": self.model,
            "messages": [{"role": "system", "content": r.instructions}, {"role": "user", "content": user}],
            "temperature": 0,
        });
        if let (Some(max_tokens), Some(fields)) = (self.max_tokens, body.as_object_mut()) {
            fields.insert("max_tokens".into(), json!(max_tokens));
        }
        // The run's time budget bounds the whole exchange, as it bounds decision requests.
        let timeout = match r.deadline {
            None => self.timeout,
            Some(deadline) => match deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
                Some(left) => left.min(self.timeout),
                None => return Err(fail("not sent: the run's time budget is spent".into())),
            },
        };
        let mut request = self.agent.post(&self.url).config().timeout_global(Some(timeout)).build();
        if let Some(key) = &self.key {
            request = request.header("authorization", key.bearer());
        }
        let scrub = |text: String| self.key.as_ref().map_or_else(|| redact_bearer(&text), |k| k.redact(&text));
        let mut response = request.send_json(&body).map_err(|e| fail(scrub(e.to_string())))?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_vec()
            .map_err(|e| fail(scrub(format!("HTTP {status}: unreadable reply: {e}"))))?;
        let (mut reply, duplicates) =
            parse_strict(&bytes).map_err(|e| fail(format!("HTTP {status}: unreadable reply: {e}")))?;
        // The answer reaches the terminal and the log: a server echoing the request's
        // authorization header must not put the key there.
        redact_value(&mut reply, self.key.as_ref());
        if let Some(duplicate) = duplicates.first() {
            return Err(fail(format!("HTTP {status}: the reply has the key `{}` twice in one object", duplicate.key)));
        }
        if !(200..300).contains(&status) {
            // Scrubbed before clipping: a clip must not cut a key in two and keep half of it.
            return Err(fail(format!("HTTP {status}: {}", clip(&scrub(reply.to_string()), 200))));
        }
        let text = reply
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| fail("the reply has no choices[0].message.content".into()))?;
        Ok(Generated {
            text: text.to_owned(),
            latency: started.elapsed(),
            input_tokens: reply.pointer("/usage/prompt_tokens").and_then(Value::as_u64),
            output_tokens: reply.pointer("/usage/completion_tokens").and_then(Value::as_u64),
        })
    }
}

//! The reference file tools (runtime.md §8), confined to a work directory.
//!
//! Every path is resolved with symlinks followed *before* the containment check: the
//! existing part of the path is canonicalised, and the part that does not exist yet may
//! hold only plain names (no `..`). A name that merely starts with `..` (such as `..notes`)
//! is an ordinary name and is allowed. All failures come back as output text starting with
//! [`TOOL_ERROR_PREFIX`]; a failed tool never panics and never touches anything outside.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// Every tool error starts with this.
pub const TOOL_ERROR_PREFIX: &str = "error: ";
/// Output longer than this is cut by the tool layer.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 8000;
/// `read_file` keeps this many characters of a file.
pub const READ_FILE_MAX_CHARS: usize = 4000;

/// The reference's six tools in its order, then the three this host adds ([`super::explore`]
/// and `append_file`).
pub const TOOL_NAMES: [&str; 9] =
    ["list_dir", "read_file", "write_file", "move_file", "delete_file", "done", "list_files", "search", "append_file"];

/// A tool's static description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    pub name: &'static str,
    /// 0 read-only, 1 reversible write, 2 irreversible, 3 destructive.
    pub base_risk: u64,
    /// Inputs longer than this (in characters) are refused before anything runs.
    pub max_input_chars: Option<usize>,
}

/// The tool table: the reference's six, then `list_files`, `search` and `append_file`.
pub const TOOLS: [ToolSpec; 9] = [
    ToolSpec { name: "list_dir", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "read_file", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "write_file", base_risk: 1, max_input_chars: Some(64_000) },
    ToolSpec { name: "move_file", base_risk: 2, max_input_chars: Some(4096) },
    ToolSpec { name: "delete_file", base_risk: 3, max_input_chars: Some(4096) },
    ToolSpec { name: "done", base_risk: 0, max_input_chars: None },
    ToolSpec { name: "list_files", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "search", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "append_file", base_risk: 1, max_input_chars: Some(64_000) },
];

/// The spec of a tool name returned by a model (untrusted): exact match only.
pub fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// A work directory, canonicalised once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    /// The directory must exist; it is canonicalised (symlinks followed).
    pub fn new(root: &Path) -> std::io::Result<Sandbox> {
        let root = fs::canonicalize(root)?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Sandbox { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolve `input` inside the work directory, or say why not.
    pub fn resolve(&self, input: &str) -> Result<PathBuf, String> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err("empty path".into());
        }
        let escape = || format!("path escapes the working directory: {trimmed}");
        let joined = self.root.join(trimmed);
        // Split into the longest existing ancestor and the remainder.
        let mut existing = joined.as_path();
        let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
        while fs::symlink_metadata(existing).is_err() {
            let name = existing.file_name();
            let parent = existing.parent();
            match (name, parent) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    existing = parent;
                }
                // `..` or `.` as the last component of a missing path: refuse rather than guess.
                _ => return Err(escape()),
            }
        }
        // A missing remainder may hold only plain names.
        let remainder = PathBuf::from_iter(rest.iter().rev());
        if remainder.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(escape());
        }
        let base = fs::canonicalize(existing).map_err(|e| format!("cannot resolve {trimmed}: {e}"))?;
        // Joining an empty remainder would add a trailing separator.
        let full = if rest.is_empty() { base } else { base.join(remainder) };
        if full.starts_with(&self.root) { Ok(full) } else { Err(escape()) }
    }

    /// The path relative to the work directory, for messages.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
    }

    /// Run `name` on `input`. Input and output caps apply; errors are output text starting with
    /// [`TOOL_ERROR_PREFIX`].
    pub fn call(&self, name: &str, input: &str) -> String {
        match self.run(name, input) {
            Ok(out) => out,
            Err(e) => cap_output(format!("{TOOL_ERROR_PREFIX}{e}")),
        }
    }

    /// Run `name` on `input`: the output (capped), or why the tool failed. The two stay apart
    /// here, so that a tool outcome never has to be guessed back from the text.
    pub fn run(&self, name: &str, input: &str) -> Result<String, String> {
        let Some(spec) = tool(name) else { return Err(format!("unknown tool {name}")) };
        let chars = input.chars().count();
        if let Some(max) = spec.max_input_chars
            && chars > max
        {
            return Err(format!(
                "input of {chars} characters exceeds the {max}-character limit of {name}; the call was not executed"
            ));
        }
        let result = match name {
            "list_dir" => self.list_dir(),
            "read_file" => match super::explore::parse_range(input) {
                Some((path, start, end)) => super::explore::read_range(self, path, start, end),
                None => self.read_file(input),
            },
            "list_files" => super::explore::list_files(self, input),
            "search" => super::explore::search(self, input),
            "append_file" => self.append_file(input),
            "write_file" => self.write_file(input),
            "move_file" => self.move_file(input),
            "delete_file" => self.delete_file(input),
            _ => Ok("task marked as done".into()),
        };
        result.map(cap_output)
    }

    /// The work directory's entries (no recursion), dot names dropped, directories with `/`,
    /// sorted by UTF-16 code units, one per line; an empty directory gives `""`.
    fn list_dir(&self) -> Result<String, String> {
        let entries = fs::read_dir(&self.root).map_err(|e| format!("cannot list the directory: {e}"))?;
        let mut names: Vec<String> = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list the directory: {e}"))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            // `metadata` follows symlinks: a link to a directory is listed as one.
            let is_dir = fs::metadata(entry.path()).map(|m| m.is_dir()).unwrap_or(false);
            names.push(if is_dir { format!("{name}/") } else { name });
        }
        names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        Ok(names.join("\n"))
    }

    fn read_file(&self, input: &str) -> Result<String, String> {
        let path = self.resolve(input)?;
        if path.is_dir() {
            return Ok("(this is a directory; use list_dir)".into());
        }
        let bytes = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", input.trim()))?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", input.trim()))?;
        let total = text.chars().count();
        if total <= READ_FILE_MAX_CHARS {
            return Ok(text);
        }
        let head: String = text.chars().take(READ_FILE_MAX_CHARS).collect();
        Ok(format!("{head}\n…[+{} chars]", total - READ_FILE_MAX_CHARS))
    }

    fn write_file(&self, input: &str) -> Result<String, String> {
        let (path, content) = input.split_once('\n').ok_or("write_file takes `path\\ncontent`")?;
        let target = self.resolve(path)?;
        if target.is_dir() {
            return Err(format!("{} is a directory", path.trim()));
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", self.relative(parent)))?;
        }
        fs::write(&target, content).map_err(|e| format!("cannot write {}: {e}", path.trim()))?;
        Ok(format!("written {} ({} chars)", self.relative(&target), content.chars().count()))
    }

    /// `path\ncontent`: the content is added at the end of the file (created when missing);
    /// nothing that is already there changes.
    fn append_file(&self, input: &str) -> Result<String, String> {
        use std::io::Write;
        let (path, content) = input.split_once('\n').ok_or("append_file takes `path\\ncontent`")?;
        let target = self.resolve(path)?;
        if target.is_dir() {
            return Err(format!("{} is a directory", path.trim()));
        }
        let existing = fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
        // Appended text starts on a line of its own.
        let needs_newline =
            existing > 0 && fs::read(&target).map(|b| b.last().is_some_and(|last| *last != b'\n')).unwrap_or(false);
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&target)
            .map_err(|e| format!("cannot open {}: {e}", path.trim()))?;
        let text = if needs_newline { format!("\n{content}") } else { content.to_owned() };
        file.write_all(text.as_bytes()).map_err(|e| format!("cannot append to {}: {e}", path.trim()))?;
        Ok(format!("appended {} chars to {}", content.chars().count(), self.relative(&target)))
    }

    fn move_file(&self, input: &str) -> Result<String, String> {
        let (from, to) = input.split_once('\n').ok_or("move_file takes `from\\nto`")?;
        let source = self.resolve(from)?;
        let target = self.resolve(to)?;
        if source == target {
            return Err("source and target are the same".into());
        }
        if fs::symlink_metadata(&source).is_err() {
            return Err(format!("{} does not exist", from.trim()));
        }
        // Never overwrite: that is what keeps a move reversible.
        if fs::symlink_metadata(&target).is_ok() {
            return Err(format!("{} already exists", to.trim()));
        }
        fs::rename(&source, &target).map_err(|e| format!("cannot move {}: {e}", from.trim()))?;
        Ok(format!("moved {} → {}", self.relative(&source), self.relative(&target)))
    }

    fn delete_file(&self, input: &str) -> Result<String, String> {
        let path = self.resolve(input)?;
        if path == self.root {
            return Err("refusing to delete the working directory".into());
        }
        let meta = fs::metadata(&path).map_err(|e| format!("cannot delete {}: {e}", input.trim()))?;
        if meta.is_dir() {
            fs::remove_dir(&path).map_err(|e| format!("cannot delete {}: {e}", input.trim()))?;
            return Ok(format!("deleted empty directory {}", self.relative(&path)));
        }
        fs::remove_file(&path).map_err(|e| format!("cannot delete {}: {e}", input.trim()))?;
        Ok(format!("deleted {} ({} bytes)", self.relative(&path), meta.len()))
    }
}

/// Output beyond [`DEFAULT_MAX_OUTPUT_CHARS`] is cut, saying how much was dropped.
pub fn cap_output(out: String) -> String {
    let total = out.chars().count();
    if total <= DEFAULT_MAX_OUTPUT_CHARS {
        return out;
    }
    let head: String = out.chars().take(DEFAULT_MAX_OUTPUT_CHARS).collect();
    format!("{head}…[+{} chars cut by the tool layer]", total - DEFAULT_MAX_OUTPUT_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("decision-tools-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn paths_stay_inside() {
        let dir = temp("paths");
        fs::write(dir.join("a.txt"), "hello").unwrap();
        fs::write(dir.join("..notes"), "dots").unwrap();
        let sb = Sandbox::new(&dir).unwrap();
        assert!(sb.resolve("a.txt").is_ok());
        assert!(sb.resolve("..notes").is_ok(), "a name that starts with .. is a name");
        assert!(sb.resolve("new/dir/file.txt").is_ok());
        assert!(sb.resolve("../outside.txt").is_err());
        assert!(sb.resolve("new/../../outside.txt").is_err());
        assert!(sb.resolve("/etc/passwd").is_err());
        assert!(sb.resolve(&dir.join("a.txt").display().to_string()).is_ok(), "absolute paths inside are fine");
        assert!(sb.call("read_file", "../x").starts_with(TOOL_ERROR_PREFIX));
        assert_eq!(sb.call("read_file", "..notes"), "dots");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tools_behave_as_specified() {
        let dir = temp("tools");
        let sb = Sandbox::new(&dir).unwrap();
        assert_eq!(sb.call("list_dir", "."), "", "an empty directory lists as nothing");
        assert_eq!(sb.call("write_file", "sub/b.txt\nbody"), "written sub/b.txt (4 chars)");
        fs::write(dir.join("a.txt"), "x".repeat(4100)).unwrap();
        fs::write(dir.join(".hidden"), "h").unwrap();
        assert_eq!(sb.call("list_dir", "."), "a.txt\nsub/");
        assert!(sb.call("read_file", "a.txt").ends_with("\n…[+100 chars]"));
        assert_eq!(sb.call("read_file", "sub"), "(this is a directory; use list_dir)");
        assert!(sb.call("write_file", "no newline").starts_with(TOOL_ERROR_PREFIX));
        assert!(sb.call("move_file", "a.txt\nsub/b.txt").contains("already exists"));
        assert_eq!(sb.call("move_file", "a.txt\nc.txt"), "moved a.txt → c.txt");
        assert!(sb.call("delete_file", "sub").starts_with(TOOL_ERROR_PREFIX), "a non-empty directory stays");
        assert_eq!(sb.call("delete_file", "sub/b.txt"), "deleted sub/b.txt (4 bytes)");
        assert_eq!(sb.call("delete_file", "sub"), "deleted empty directory sub");
        let long = format!("p\n{}", "y".repeat(64_001));
        assert!(sb.call("write_file", &long).contains("the call was not executed"));
        assert!(sb.call("toString", "").starts_with(TOOL_ERROR_PREFIX));
        assert_eq!(sb.run("toString", ""), Err("unknown tool toString".into()), "a failure stays typed");
        assert_eq!(
            cap_output("z".repeat(8005)).chars().count(),
            8000 + "…[+5 chars cut by the tool layer]".chars().count()
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_are_refused() {
        let outside = temp("outside");
        fs::write(outside.join("secret.txt"), "secret").unwrap();
        let dir = temp("inside");
        std::os::unix::fs::symlink(outside.join("secret.txt"), dir.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("linkdir")).unwrap();
        let sb = Sandbox::new(&dir).unwrap();
        assert!(sb.call("read_file", "link.txt").contains("escapes"));
        assert!(sb.call("write_file", "linkdir/new.txt\nx").contains("escapes"));
        assert!(!outside.join("new.txt").exists());
        assert!(sb.call("delete_file", "link.txt").contains("escapes"));
        assert!(outside.join("secret.txt").exists());
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }
}

//! The reference file tools (runtime.md §8), confined to a work directory.
//!
//! Every file operation goes through the run's [`WorkDir`] handle (see [`super::sandbox`]):
//! paths are resolved beneath it with no way out (`..`, absolute paths, symbolic links, swaps
//! while a tool runs), only regular files with a single hard link are read or changed, reads
//! are bounded and never block, and writes replace a file by renaming a new one into place. A
//! name that merely starts with `..` (such as `..notes`) is an ordinary name and is allowed.
//! All failures come back as output text starting with [`TOOL_ERROR_PREFIX`]; a failed tool
//! never panics and never touches anything outside.

use std::path::Path;

use super::sandbox::{EntryKind, Removed, SandboxError, WorkDir};

/// Every tool error starts with this.
pub(crate) const TOOL_ERROR_PREFIX: &str = "error: ";
/// Output longer than this is cut by the tool layer.
pub(crate) const DEFAULT_MAX_OUTPUT_CHARS: usize = 8000;
/// `read_file` keeps this many characters of a file.
pub(crate) const READ_FILE_MAX_CHARS: usize = 4000;
/// `read_file` reads at most this many bytes of a file: enough for [`READ_FILE_MAX_CHARS`]
/// characters of any UTF-8 text, and never the whole of a large file.
pub(crate) const READ_FILE_MAX_BYTES: u64 = READ_FILE_MAX_CHARS as u64 * 4;

/// `append_file` rewrites a file of at most this many bytes.
pub(crate) const APPEND_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// A tool's static description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ToolSpec {
    pub(crate) name: &'static str,
    /// 0 read-only, 1 reversible write, 2 irreversible, 3 destructive.
    pub(crate) base_risk: u64,
    /// Inputs longer than this (in characters) are refused before anything runs.
    pub(crate) max_input_chars: Option<usize>,
}

/// The tool table: the reference's six, then `list_files`, `search` and `append_file`, then
/// the code index's three.
pub(crate) const TOOLS: [ToolSpec; 12] = [
    ToolSpec { name: "list_dir", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "read_file", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "write_file", base_risk: 1, max_input_chars: Some(64_000) },
    ToolSpec { name: "move_file", base_risk: 2, max_input_chars: Some(4096) },
    ToolSpec { name: "delete_file", base_risk: 3, max_input_chars: Some(4096) },
    ToolSpec { name: "done", base_risk: 0, max_input_chars: None },
    ToolSpec { name: "list_files", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "search", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "append_file", base_risk: 1, max_input_chars: Some(64_000) },
    ToolSpec { name: "find_definition", base_risk: 0, max_input_chars: Some(512) },
    ToolSpec { name: "list_symbols", base_risk: 0, max_input_chars: Some(4096) },
    ToolSpec { name: "find_references", base_risk: 0, max_input_chars: Some(512) },
];

impl ToolSpec {
    /// Whether the tool changes files (write, move, delete: any baseline above read-only). Such
    /// a tool never runs on the model's word alone (see [`super::floor`]).
    pub(crate) fn changes_files(&self) -> bool {
        self.base_risk >= 1
    }
}

/// The spec of a tool name returned by a model (untrusted): exact match only.
pub(crate) fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The file tools of one run, on the work directory's handle.
#[derive(Debug)]
pub(crate) struct FileTools {
    dir: WorkDir,
}

impl FileTools {
    /// Open the work directory (it must exist and be a directory) and hold it for the run.
    pub(crate) fn new(root: &Path) -> std::io::Result<FileTools> {
        Ok(FileTools { dir: WorkDir::open(root)? })
    }

    /// The work directory's canonical path when it was opened (for messages and the log).
    pub(crate) fn root(&self) -> &Path {
        self.dir.root()
    }

    /// The handle every tool goes through, for tools built on top of these.
    pub(crate) fn workdir(&self) -> &WorkDir {
        &self.dir
    }

    /// Run `name` on `input`. Input and output caps apply; errors are output text starting with
    /// [`TOOL_ERROR_PREFIX`]. The run itself keeps output and failure apart ([`FileTools::run`]);
    /// the tests read tools the way a model sees them.
    #[cfg(test)]
    pub(crate) fn call(&self, name: &str, input: &str) -> String {
        match self.run(name, input) {
            Ok(out) => out,
            Err(e) => cap_output(format!("{TOOL_ERROR_PREFIX}{e}")),
        }
    }

    /// Run `name` on `input`: the output (capped), or why the tool failed. The two stay apart
    /// here, so that a tool outcome never has to be guessed back from the text.
    pub(crate) fn run(&self, name: &str, input: &str) -> Result<String, String> {
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
                Some((path, start, end)) => super::explore::read_range(&self.dir, path, start, end),
                None => self.read_file(input),
            },
            "list_files" => super::explore::list_files(&self.dir, input),
            "search" => super::explore::search(&self.dir, input),
            "find_definition" => super::codeindex::find_definition(&self.dir, input),
            "list_symbols" => super::codeindex::list_symbols(&self.dir, input),
            "find_references" => super::codeindex::find_references(&self.dir, input),
            "append_file" => self.append_file(input),
            "write_file" => self.write_file(input),
            "move_file" => self.move_file(input),
            "delete_file" => self.delete_file(input),
            _ => Ok("task marked as done".into()),
        };
        result.map(cap_output)
    }

    /// The work directory's entries (no recursion), dot names dropped, directories (and links
    /// to directories inside) with `/`, sorted by UTF-16 code units, one per line; an empty
    /// directory gives `""`.
    fn list_dir(&self) -> Result<String, String> {
        let entries = self.dir.entries(Path::new("")).map_err(|e| format!("cannot list the directory: {e}"))?;
        let mut names: Vec<String> = Vec::new();
        for entry in entries {
            let name = entry.name_lossy();
            if name.starts_with('.') {
                continue;
            }
            names.push(if entry.target == Some(EntryKind::Dir) { format!("{name}/") } else { name });
        }
        names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        Ok(names.join("\n"))
    }

    /// The file's text, its first [`READ_FILE_MAX_CHARS`] characters when longer. Only
    /// [`READ_FILE_MAX_BYTES`] bytes are read: a file that fits is checked as UTF-8 whole and
    /// says how many characters were cut; a larger one is checked as far as it was read and
    /// says how many bytes were not shown.
    fn read_file(&self, input: &str) -> Result<String, String> {
        let path = self.dir.path(input).map_err(message)?;
        if self.dir.target_kind(&path).is_ok_and(|kind| kind == EntryKind::Dir) {
            return Ok("(this is a directory; use list_dir)".into());
        }
        let out = self.dir.read(&path, 0, READ_FILE_MAX_BYTES).map_err(message)?;
        let not_text = || format!("{} is not UTF-8 text", input.trim());
        let text = match std::str::from_utf8(&out.bytes) {
            Ok(text) => text,
            // A character cut at the end of the window is not an error in the file.
            Err(e) if !out.at_end && e.error_len().is_none() => {
                std::str::from_utf8(out.bytes.get(..e.valid_up_to()).unwrap_or_default()).map_err(|_| not_text())?
            }
            Err(_) => return Err(not_text()),
        };
        let head_end = text.char_indices().nth(READ_FILE_MAX_CHARS).map(|(at, _)| at);
        match head_end {
            None if out.at_end => Ok(text.to_owned()),
            None => Ok(format!("{text}\n…[+{} bytes]", out.file_len.saturating_sub(out.bytes.len() as u64))),
            Some(at) => {
                let head = text.get(..at).unwrap_or_default();
                if out.at_end {
                    let total = text.chars().count();
                    Ok(format!("{head}\n…[+{} chars]", total - READ_FILE_MAX_CHARS))
                } else {
                    Ok(format!("{head}\n…[+{} bytes]", out.file_len.saturating_sub(at as u64)))
                }
            }
        }
    }

    fn write_file(&self, input: &str) -> Result<String, String> {
        let (path, content) = input.split_once('\n').ok_or("write_file takes `path\\ncontent`")?;
        let target = self.dir.path(path).map_err(message)?;
        if self.dir.target_kind(&target).is_ok_and(|kind| kind == EntryKind::Dir) {
            return Err(format!("{} is a directory", path.trim()));
        }
        self.dir.write(&target, content.as_bytes()).map_err(message)?;
        Ok(format!("written {} ({} chars)", target.display(), content.chars().count()))
    }

    /// `path\ncontent`: the content is added at the end of the file (created when missing);
    /// nothing that is already there changes. The whole new text replaces the file by rename,
    /// as every write does, so a failure leaves the old file as it was.
    fn append_file(&self, input: &str) -> Result<String, String> {
        let (path, content) = input.split_once('\n').ok_or("append_file takes `path\\ncontent`")?;
        let target = self.dir.path(path).map_err(message)?;
        let existing = match self.dir.read(&target, 0, APPEND_MAX_BYTES) {
            Ok(out) if !out.at_end => {
                return Err(format!("{} is larger than {APPEND_MAX_BYTES} bytes; nothing was appended", path.trim()));
            }
            Ok(out) => out.bytes,
            Err(e) if e.is_not_found() => Vec::new(),
            Err(e) => return Err(message(e)),
        };
        let mut text = existing;
        // Appended text starts on a line of its own.
        if text.last().is_some_and(|last| *last != b'\n') {
            text.push(b'\n');
        }
        text.extend_from_slice(content.as_bytes());
        self.dir.write(&target, &text).map_err(message)?;
        Ok(format!("appended {} chars to {}", content.chars().count(), target.display()))
    }

    fn move_file(&self, input: &str) -> Result<String, String> {
        let (from, to) = input.split_once('\n').ok_or("move_file takes `from\\nto`")?;
        let source = self.dir.path(from).map_err(message)?;
        let target = self.dir.path(to).map_err(message)?;
        if source == target {
            return Err("source and target are the same".into());
        }
        match self.dir.kind(&source) {
            Err(e) if e.is_not_found() => return Err(format!("{} does not exist", from.trim())),
            Err(e) => return Err(message(e)),
            Ok(_) => {}
        }
        // Never overwrite: that is what keeps a move reversible.
        if self.dir.kind(&target).is_ok() {
            return Err(format!("{} already exists", to.trim()));
        }
        self.dir.rename(&source, &target).map_err(message)?;
        Ok(format!("moved {} → {}", source.display(), target.display()))
    }

    fn delete_file(&self, input: &str) -> Result<String, String> {
        let path = self.dir.path(input).map_err(message)?;
        match self.dir.remove(&path).map_err(message)? {
            Removed::EmptyDir => Ok(format!("deleted empty directory {}", path.display())),
            Removed::File { bytes } => Ok(format!("deleted {} ({bytes} bytes)", path.display())),
        }
    }
}

/// A sandbox refusal as a tool's error text.
fn message(e: SandboxError) -> String {
    e.to_string()
}

/// Output beyond [`DEFAULT_MAX_OUTPUT_CHARS`] is cut, saying how much was dropped.
pub(crate) fn cap_output(out: String) -> String {
    let total = out.chars().count();
    if total <= DEFAULT_MAX_OUTPUT_CHARS {
        return out;
    }
    let head: String = out.chars().take(DEFAULT_MAX_OUTPUT_CHARS).collect();
    format!("{head}…[+{} chars{CUT_NOTE_END}", total - DEFAULT_MAX_OUTPUT_CHARS)
}

/// How the note that ends a cut output ends.
pub(crate) const CUT_NOTE_END: &str = " cut by the tool layer]";

/// The files a listing names: its lines, without directories and notes. A listing longer than
/// the tool layer's cap ends in a cut line (part of a name, then the cut's note): it names no
/// file and is dropped.
pub(crate) fn listed_files(output: &str) -> Vec<String> {
    let mut lines: Vec<&str> = output.split('\n').collect();
    if output.ends_with(CUT_NOTE_END) {
        lines.pop();
    }
    lines.into_iter().filter(|l| !l.is_empty() && !l.ends_with('/') && !l.starts_with('[')).map(str::to_owned).collect()
}

/// Whether a listing is not the whole of what it lists: the tool layer cut its output, or
/// the walk stopped at its file or depth limit.
pub(crate) fn listing_is_cut(output: &str) -> bool {
    output.ends_with(CUT_NOTE_END) || output.contains("; listing cut at ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cut_listing_names_no_file_in_its_cut_line() {
        let whole = "a.py\nsrc/\nb.py\n[2 files]\n";
        assert_eq!(listed_files(whole), ["a.py", "b.py"]);
        let long: String = (0..2000).map(|i| format!("module_{i:04}.py\n")).collect();
        let cut = cap_output(long);
        let files = listed_files(&cut);
        assert!(!files.is_empty());
        assert!(files.iter().all(|f| f.starts_with("module_") && f.ends_with(".py")), "{:?}", files.last());
    }

    #[test]
    fn a_listing_cut_by_the_tool_layer_or_the_walk_says_so() {
        assert!(!listing_is_cut("a.py\nb.py\n[2 files]"));
        let long: String = (0..2000).map(|i| format!("module_{i:04}.py\n")).collect();
        assert!(listing_is_cut(&cap_output(long)));
        assert!(listing_is_cut("a.py\n[2000 files; listing cut at 2000 files or depth 24]"));
    }

    use super::*;
    use std::fs;
    use std::path::PathBuf;

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
        let sb = FileTools::new(&dir).unwrap();
        let wd = sb.workdir();
        assert!(wd.path("a.txt").is_ok());
        assert!(wd.path("..notes").is_ok(), "a name that starts with .. is a name");
        assert!(wd.path("new/dir/file.txt").is_ok());
        assert!(wd.path("../outside.txt").is_err());
        assert!(wd.path("new/../../outside.txt").is_err());
        assert!(wd.path("/etc/passwd").is_err());
        let absolute = sb.root().join("a.txt").display().to_string();
        assert_eq!(sb.call("read_file", &absolute), "hello", "absolute paths inside are fine");
        assert_eq!(sb.call("read_file", "/etc/passwd"), "error: path escapes the working directory: /etc/passwd");
        assert!(sb.call("read_file", "../x").starts_with(TOOL_ERROR_PREFIX));
        assert_eq!(sb.call("read_file", "..notes"), "dots");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tools_behave_as_specified() {
        let dir = temp("tools");
        let sb = FileTools::new(&dir).unwrap();
        assert_eq!(sb.call("list_dir", "."), "", "an empty directory lists as nothing");
        assert_eq!(sb.call("write_file", "sub/b.txt\nbody"), "written sub/b.txt (4 chars)");
        fs::write(dir.join("a.txt"), "x".repeat(4100)).unwrap();
        fs::write(dir.join(".hidden"), "h").unwrap();
        assert_eq!(sb.call("list_dir", "."), "a.txt\nsub/");
        assert!(sb.call("read_file", "a.txt").ends_with("\n…[+100 chars]"));
        assert_eq!(
            sb.call("read_file", "missing.txt"),
            "error: cannot read missing.txt: No such file or directory (os error 2)"
        );
        assert_eq!(sb.call("move_file", "missing.txt\nx"), "error: missing.txt does not exist");
        assert_eq!(sb.call("delete_file", "."), "error: refusing to delete the working directory");
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
        let sb = FileTools::new(&dir).unwrap();
        assert!(sb.call("read_file", "link.txt").contains("escapes"));
        assert!(sb.call("write_file", "linkdir/new.txt\nx").contains("escapes"));
        assert!(!outside.join("new.txt").exists());
        // A link itself is never deleted (nor written or moved): only files and directories are.
        assert!(sb.call("delete_file", "link.txt").contains("is a symbolic link"));
        assert!(outside.join("secret.txt").exists());
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn a_hard_link_to_an_outside_file_is_not_overwritten() {
        let dir = temp("hardlink-in");
        let outside = temp("hardlink-out");
        fs::write(outside.join("s.txt"), "outside").unwrap();
        fs::hard_link(outside.join("s.txt"), dir.join("s.txt")).unwrap();
        let sb = FileTools::new(&dir).unwrap();
        assert_eq!(
            sb.call("write_file", "s.txt\nPWNED"),
            "error: s.txt has 2 hard links; a file with more than one name is not touched"
        );
        assert!(sb.call("read_file", "s.txt").starts_with(TOOL_ERROR_PREFIX));
        assert!(sb.call("delete_file", "s.txt").starts_with(TOOL_ERROR_PREFIX));
        assert_eq!(fs::read_to_string(outside.join("s.txt")).unwrap(), "outside");
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn large_and_special_files_are_read_in_bounded_time() {
        let dir = temp("large");
        let big = fs::File::create(dir.join("big.txt")).unwrap();
        big.set_len(1 << 30).unwrap();
        drop(big);
        // A long text over the window: the head, then how many bytes were not shown.
        fs::write(dir.join("long.txt"), "é".repeat(10_000)).unwrap();
        // Not UTF-8 within the window, and UTF-8 cut at the window's end.
        fs::write(dir.join("bin"), [0xff, 0xfe, 0x00]).unwrap();
        let mut cut = "a".repeat(READ_FILE_MAX_BYTES as usize - 1).into_bytes();
        cut.extend("€€".as_bytes());
        fs::write(dir.join("cut.txt"), &cut).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(dir.join("pipe")).status().unwrap().success());
        let sb = FileTools::new(&dir).unwrap();
        let started = std::time::Instant::now();
        let out = sb.call("read_file", "big.txt");
        assert_eq!(out, format!("{}\n…[+{} bytes]", "\0".repeat(4000), (1u64 << 30) - 4000));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(sb.call("read_file", "long.txt"), format!("{}\n…[+12000 bytes]", "é".repeat(4000)));
        assert_eq!(sb.call("read_file", "bin"), "error: bin is not UTF-8 text");
        assert!(sb.call("read_file", "cut.txt").ends_with(&format!("\n…[+{} bytes]", cut.len() - 4000)));
        assert_eq!(sb.call("read_file", "pipe"), "error: pipe is a FIFO, not a regular file; it is not opened");
        assert_eq!(sb.call("list_dir", ""), "big.txt\nbin\ncut.txt\nlong.txt\npipe");
        fs::remove_dir_all(&dir).unwrap();
    }
}

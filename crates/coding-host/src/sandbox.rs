//! The work directory as a capability: every file operation of the tools goes through one
//! directory handle opened at the start of the run, never through a path string.
//!
//! What this module guarantees (the tools build on it, see `docs/security.md`):
//!
//! - **Nothing outside is reached.** Paths are resolved beneath the handle by `cap-std`
//!   (`openat2` with `RESOLVE_BENEATH` on Linux, otherwise one component at a time with
//!   `O_NOFOLLOW`), so `..`, absolute paths and symbolic links cannot lead out, not even when
//!   another process swaps a file or a directory for a link while a tool runs. A symbolic link
//!   is followed only where its target is relative and stays inside.
//! - **Only regular files are read**, and without blocking: a FIFO, a device or a socket is
//!   refused (the open is non-blocking, and the kind is checked on the opened handle).
//! - **Reads are bounded**: at most the requested number of bytes is read, never the whole file.
//! - **A file with more than one hard link is refused** by every operation (read, write, move,
//!   delete): its other names may be outside, and the tools cannot tell.
//! - **Writes never change a file in place**: the content goes to a new file in the same
//!   directory, which is then renamed over the name, so an inode shared with anything outside
//!   is never written to.
//! - **Symbolic links are never changed, moved or deleted**: write, move and delete work on
//!   regular files and directories only.
//!
//! Paths given to this module are relative to the work directory; [`WorkDir::path`] turns a
//! model's path text into one (or says why not).

use std::ffi::OsString;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::{MetadataExt, OpenOptionsSyncExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, OpenOptions};

/// The longest name, and the longest path, that the operations pass to the system: longer
/// ones are refused before anything is touched.
pub(crate) const NAME_MAX: usize = 255;
pub(crate) const PATH_MAX: usize = 4095;

/// Why a sandboxed operation was refused or failed. The `Display` text is the message the
/// tools show (without their `error: ` prefix); `path` is the text as the caller gave it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    #[error("empty path")]
    EmptyPath,
    #[error("path escapes the working directory: {path}")]
    Escapes { path: String },
    #[error("{path} is a directory")]
    IsDirectory { path: String },
    #[error("{path} is a symbolic link; the tools change only regular files and directories")]
    Symlink { path: String },
    #[error("{path} is a {kind}, not a regular file; it is not opened")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path} has {links} hard links; a file with more than one name is not touched")]
    HardLinked { path: String, links: u64 },
    #[error("{path} already exists")]
    AlreadyExists { path: String },
    #[error("refusing to {action} the working directory")]
    WorkDirItself { action: &'static str },
    #[error("{path} is longer than the system allows ({NAME_MAX} bytes a name, {PATH_MAX} a path)")]
    TooLong { path: String },
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: io::Error,
    },
}

/// What a directory entry is, seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    File,
    Dir,
    Symlink,
    /// A FIFO, a socket or a device.
    Other,
}

impl EntryKind {
    fn of(file_type: cap_std::fs::FileType) -> EntryKind {
        if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        }
    }
}

/// One entry of [`WorkDir::entries`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The entry's name (not a path).
    pub(crate) name: OsString,
    /// What the entry itself is (a link is [`EntryKind::Symlink`]).
    pub(crate) kind: EntryKind,
    /// For a symbolic link: what it leads to, when that is inside the work directory;
    /// `None` for a link that leads outside or nowhere. For anything else: `Some(kind)`.
    pub(crate) target: Option<EntryKind>,
}

impl Entry {
    /// The name for display (not for opening: invalid UTF-8 is replaced).
    pub(crate) fn name_lossy(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }
}

/// What [`WorkDir::read`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadOut {
    /// The bytes read (at most the `max_bytes` asked for).
    pub(crate) bytes: Vec<u8>,
    /// The offset of the first byte of `bytes` in the file.
    pub(crate) start: u64,
    /// The file's length when it was opened.
    pub(crate) file_len: u64,
    /// Whether `bytes` reach the end of the file (nothing after them was left unread).
    pub(crate) at_end: bool,
}

/// What [`WorkDir::remove`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removed {
    File { bytes: u64 },
    EmptyDir,
}

/// The work directory, held open for the run. All paths are relative to it.
#[derive(Debug)]
pub(crate) struct WorkDir {
    dir: Dir,
    root: PathBuf,
}

/// The most a read allocates before its first byte arrives: a file's length is only what it
/// was when it was opened.
const MAX_PRESIZED_READ: u64 = 16 << 20;

/// Makes the names of temporary files unique within the process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl WorkDir {
    /// Open `root` (which must be a directory; symlinks in `root` itself are followed, once,
    /// here) and hold it for the rest of the run.
    pub(crate) fn open(root: &Path) -> io::Result<WorkDir> {
        let root = std::fs::canonicalize(root)?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority())?;
        Ok(WorkDir { dir, root })
    }

    /// The canonical path the directory had when it was opened (for messages and the log;
    /// operations never go through it).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Turn a path text (from a model, untrusted) into a path relative to the work directory:
    /// surrounding whitespace is trimmed; an absolute path must lie under [`WorkDir::root`];
    /// `.` and `..` are resolved on the names, and a `..` that would climb above the work
    /// directory is refused. The empty result (`.`) stands for the work directory itself.
    pub(crate) fn path(&self, input: &str) -> Result<PathBuf, SandboxError> {
        let text = input.trim();
        if text.is_empty() {
            return Err(SandboxError::EmptyPath);
        }
        let escapes = || SandboxError::Escapes { path: text.to_owned() };
        let given = Path::new(text);
        let relative = if given.is_absolute() { given.strip_prefix(&self.root).map_err(|_| escapes())? } else { given };
        let mut out = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => out.push(name),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return Err(escapes());
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(escapes()),
            }
        }
        Ok(out)
    }

    /// The kind of `path` itself (a link is not followed).
    pub(crate) fn kind(&self, path: &Path) -> Result<EntryKind, SandboxError> {
        check_len(path)?;
        if is_root(path) {
            return Ok(EntryKind::Dir);
        }
        let meta = self.dir.symlink_metadata(path).map_err(|e| classify(e, "inspect", path))?;
        Ok(EntryKind::of(meta.file_type()))
    }

    /// What `path` leads to, following links that stay inside.
    pub(crate) fn target_kind(&self, path: &Path) -> Result<EntryKind, SandboxError> {
        check_len(path)?;
        if is_root(path) {
            return Ok(EntryKind::Dir);
        }
        let meta = self.dir.metadata(path).map_err(|e| classify(e, "inspect", path))?;
        Ok(EntryKind::of(meta.file_type()))
    }

    /// The entries of the directory `path` (`""` for the work directory), in the order the
    /// file system gives them, `.` and `..` left out. A recursive walk should descend only
    /// into entries whose `kind` is [`EntryKind::Dir`], so that links cannot make it loop.
    pub(crate) fn entries(&self, path: &Path) -> Result<Vec<Entry>, SandboxError> {
        check_len(path)?;
        let sub;
        let dir = if is_root(path) {
            &self.dir
        } else {
            sub = self.dir.open_dir(path).map_err(|e| classify(e, "list", path))?;
            &sub
        };
        let listing = dir.entries().map_err(|e| classify(e, "list", path))?;
        let mut out = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| classify(e, "list", path))?;
            let file_type = entry.file_type().map_err(|e| classify(e, "list", path))?;
            let kind = EntryKind::of(file_type);
            let name = entry.file_name();
            let target = if kind == EntryKind::Symlink {
                dir.metadata(&name).ok().map(|m| EntryKind::of(m.file_type()))
            } else {
                Some(kind)
            };
            out.push(Entry { name, kind, target });
        }
        Ok(out)
    }

    /// Read part of the regular file `path` (links that stay inside are followed): at most
    /// `max_bytes` bytes are read, whatever the file's size. A FIFO, device or socket is
    /// refused without blocking; so is a file with more than one hard link.
    pub(crate) fn read(&self, path: &Path, start: u64, max_bytes: u64) -> Result<ReadOut, SandboxError> {
        check_len(path)?;
        let (mut file, file_len) = self.open_regular(path)?;
        let reading = |e| classify(e, "read", path);
        file.seek(SeekFrom::Start(start)).map_err(reading)?;
        // One byte more than asked tells whether anything was left unread. The buffer is
        // sized from the length the file had when it was opened, so it never grows a doubling
        // at a time: a small file read whole takes one `read` and one more that finds its end
        // (three before). A file that has grown since is still read to the bound.
        let expected = file_len.saturating_sub(start).min(max_bytes).saturating_add(1);
        let mut bytes = Vec::with_capacity(usize::try_from(expected.min(MAX_PRESIZED_READ)).unwrap_or(0));
        file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(reading)?;
        let at_end = u64::try_from(bytes.len()).unwrap_or(u64::MAX) <= max_bytes;
        bytes.truncate(usize::try_from(max_bytes).unwrap_or(usize::MAX));
        Ok(ReadOut { bytes, start, file_len, at_end })
    }

    /// Write `content` to `path`, creating missing parent directories. The content goes to a
    /// new file in the target's directory, which is renamed over the name: an existing file is
    /// replaced, never written in place (its permissions are kept). A directory, a symbolic
    /// link, a non-regular file or a file with more than one hard link is not replaced.
    pub(crate) fn write(&self, path: &Path, content: &[u8]) -> Result<(), SandboxError> {
        check_len(path)?;
        let (parent, name) = split(path).ok_or(SandboxError::WorkDirItself { action: "overwrite" })?;
        self.create_parents(parent)?;
        let dir = self.open_parent(parent)?;
        let existing = match dir.symlink_metadata(name) {
            Ok(meta) => Some(check_replaceable(&meta, path)?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(classify(e, "write", path)),
        };
        let (temp_name, mut temp) = create_temp(&dir).map_err(|e| classify(e, "write", path))?;
        let written = (|| {
            temp.write_all(content)?;
            if let Some(permissions) = existing {
                temp.set_permissions(permissions)?;
            }
            temp.flush()?;
            drop(temp);
            dir.rename(&temp_name, &dir, name)
        })();
        if let Err(e) = written {
            let _ = dir.remove_file(&temp_name);
            return Err(classify(e, "write", path));
        }
        Ok(())
    }

    /// Rename `from` to `to` (a regular file or a directory), never replacing anything at `to`.
    pub(crate) fn rename(&self, from: &Path, to: &Path) -> Result<(), SandboxError> {
        check_len(from)?;
        check_len(to)?;
        let (from_parent, from_name) = split(from).ok_or(SandboxError::WorkDirItself { action: "move" })?;
        let (to_parent, to_name) = split(to).ok_or(SandboxError::WorkDirItself { action: "replace" })?;
        let source_dir = self.open_parent(from_parent)?;
        let meta = source_dir.symlink_metadata(from_name).map_err(|e| classify(e, "move", from))?;
        if !meta.is_dir() {
            check_replaceable(&meta, from)?;
        }
        let target_dir = self.open_parent(to_parent)?;
        // Never overwrite: that is what keeps a move reversible.
        match target_dir.symlink_metadata(to_name) {
            Ok(_) => return Err(SandboxError::AlreadyExists { path: shown(to) }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(classify(e, "move to", to)),
        }
        source_dir.rename(from_name, &target_dir, to_name).map_err(|e| classify(e, "move", from))
    }

    /// Delete the regular file or the empty directory `path`.
    pub(crate) fn remove(&self, path: &Path) -> Result<Removed, SandboxError> {
        check_len(path)?;
        let (parent, name) = split(path).ok_or(SandboxError::WorkDirItself { action: "delete" })?;
        let dir = self.open_parent(parent)?;
        let meta = dir.symlink_metadata(name).map_err(|e| classify(e, "delete", path))?;
        if meta.is_dir() {
            dir.remove_dir(name).map_err(|e| classify(e, "delete", path))?;
            return Ok(Removed::EmptyDir);
        }
        check_replaceable(&meta, path)?;
        dir.remove_file(name).map_err(|e| classify(e, "delete", path))?;
        Ok(Removed::File { bytes: meta.len() })
    }

    /// Open a regular file for reading, without blocking, and check it on the opened handle.
    fn open_regular(&self, path: &Path) -> Result<(File, u64), SandboxError> {
        if is_root(path) {
            return Err(SandboxError::IsDirectory { path: ".".into() });
        }
        // Checked before opening, so that a FIFO or a device is usually not even opened...
        let before = self.dir.metadata(path).map_err(|e| classify(e, "read", path))?;
        check_readable(&before, path)?;
        let mut options = OpenOptions::new();
        options.read(true).nonblock(true);
        let file = self.dir.open_with(path, &options).map_err(|e| classify(e, "read", path))?;
        // ...and after, on the handle, because the name may have changed in between.
        let meta = file.metadata().map_err(|e| classify(e, "read", path))?;
        check_readable(&meta, path)?;
        Ok((file, meta.len()))
    }

    /// Create each missing directory of `parent`, one name at a time through the handle.
    fn create_parents(&self, parent: &Path) -> Result<(), SandboxError> {
        let mut prefix = PathBuf::new();
        for component in parent.components() {
            prefix.push(component);
            match self.dir.create_dir(&prefix) {
                // An existing name is checked when the directory is opened.
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(classify(e, "create", &prefix)),
            }
        }
        Ok(())
    }

    fn open_parent(&self, parent: &Path) -> Result<Dir, SandboxError> {
        let opened = if is_root(parent) { self.dir.try_clone() } else { self.dir.open_dir(parent) };
        opened.map_err(|e| classify(e, "open", parent))
    }
}

/// Refuse a path the system would refuse anyway, before any directory is created for it.
fn check_len(path: &Path) -> Result<(), SandboxError> {
    let too_long = path.as_os_str().len() > PATH_MAX || path.components().any(|c| c.as_os_str().len() > NAME_MAX);
    if too_long { Err(SandboxError::TooLong { path: shown(path) }) } else { Ok(()) }
}

fn is_root(path: &Path) -> bool {
    path.components().all(|c| matches!(c, Component::CurDir))
}

/// The parent directory and the last name of a relative path, or `None` for the root.
fn split(path: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    let name = path.file_name()?;
    Some((path.parent().unwrap_or(Path::new("")), name))
}

fn shown(path: &Path) -> String {
    if is_root(path) { ".".into() } else { path.display().to_string() }
}

fn kind_name(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use cap_std::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "device";
        }
    }
    if meta.file_type().is_symlink() { "symbolic link" } else { "special file" }
}

fn check_readable(meta: &Metadata, path: &Path) -> Result<(), SandboxError> {
    if meta.is_dir() {
        return Err(SandboxError::IsDirectory { path: shown(path) });
    }
    if !meta.is_file() {
        return Err(SandboxError::NotRegular { path: shown(path), kind: kind_name(meta) });
    }
    let links = meta.nlink();
    if links > 1 {
        return Err(SandboxError::HardLinked { path: shown(path), links });
    }
    Ok(())
}

/// A name that write, move or delete may change: a regular file with one link. Gives the
/// file's permissions, which a replacement keeps.
fn check_replaceable(meta: &Metadata, path: &Path) -> Result<cap_std::fs::Permissions, SandboxError> {
    if meta.file_type().is_symlink() {
        return Err(SandboxError::Symlink { path: shown(path) });
    }
    check_readable(meta, path)?;
    Ok(meta.permissions())
}

/// A new, empty file with a hidden name unique to this process, in `dir`.
fn create_temp(dir: &Dir) -> io::Result<(String, File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!(".decision-write-{}-{n}.tmp", std::process::id());
        match dir.open_with(&name, &options) {
            Ok(file) => return Ok((name, file)),
            // Left behind by an earlier process with the same id: take the next number.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The error for `path`, with cap-std's refusal to leave the directory told apart.
fn classify(e: io::Error, action: &'static str, path: &Path) -> SandboxError {
    let path = shown(path);
    // cap-std reports every attempt to leave the directory as this one error.
    if e.kind() == io::ErrorKind::PermissionDenied && e.to_string().contains("outside of the filesystem") {
        return SandboxError::Escapes { path };
    }
    SandboxError::Io { action, path, source: e }
}

impl SandboxError {
    /// The system's error kind, for an [`SandboxError::Io`].
    pub(crate) fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            SandboxError::Io { source, .. } => Some(source.kind()),
            _ => None,
        }
    }

    /// Whether the path (or one of its directories) does not exist.
    pub(crate) fn is_not_found(&self) -> bool {
        self.io_kind() == Some(io::ErrorKind::NotFound)
    }
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;

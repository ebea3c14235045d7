//! Attacks on the work directory: each one tried against the handle, with the outside
//! content watched for leaks and changes. Races are bounded in count and time.

use super::*;
use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::{Duration, Instant};

/// A fresh pair of directories: `work` (the sandbox) and `outside` next to it.
fn dirs(name: &str) -> (PathBuf, PathBuf) {
    let base = std::env::temp_dir().join(format!("decision-sandbox-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&base);
    let work = base.join("work");
    let outside = base.join("outside");
    fs::create_dir_all(&work).unwrap();
    fs::create_dir_all(&outside).unwrap();
    (work, outside)
}

fn cleanup(work: &Path) {
    if let Some(base) = work.parent() {
        let _ = fs::remove_dir_all(base);
    }
}

fn head(wd: &WorkDir, path: &str) -> Result<Vec<u8>, SandboxError> {
    wd.read(Path::new(path), 0, 1 << 16).map(|out| out.bytes)
}

const SECRET: &str = "OUTSIDE-SECRET";

#[test]
fn model_paths_are_names_beneath_the_root() {
    let (work, _outside) = dirs("paths");
    let wd = WorkDir::open(&work).unwrap();
    assert_eq!(wd.path(" a/b.txt \n").unwrap(), PathBuf::from("a/b.txt"));
    assert_eq!(wd.path("a/../b.txt").unwrap(), PathBuf::from("b.txt"));
    assert_eq!(wd.path("./a/./b").unwrap(), PathBuf::from("a/b"));
    assert_eq!(wd.path("..notes").unwrap(), PathBuf::from("..notes"), "a name that starts with .. is a name");
    assert_eq!(wd.path(".").unwrap(), PathBuf::new(), "the root itself");
    assert!(matches!(wd.path("../x"), Err(SandboxError::Escapes { .. })));
    assert!(matches!(wd.path("a/../../x"), Err(SandboxError::Escapes { .. })));
    assert!(matches!(wd.path("/etc/passwd"), Err(SandboxError::Escapes { .. })));
    assert!(matches!(wd.path("   "), Err(SandboxError::EmptyPath)));
    let inside = wd.root().join("c.txt").display().to_string();
    assert_eq!(wd.path(&inside).unwrap(), PathBuf::from("c.txt"), "an absolute path under the root is fine");
    let sibling = format!("{}-other/x", wd.root().display());
    assert!(matches!(wd.path(&sibling), Err(SandboxError::Escapes { .. })), "a prefix of the name is not the root");
    cleanup(&work);
}

#[test]
fn links_out_are_not_followed_and_never_changed() {
    let (work, outside) = dirs("links");
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::create_dir(work.join("sub")).unwrap();
    fs::write(work.join("sub/in.txt"), "inside").unwrap();
    std::os::unix::fs::symlink("../outside/secret.txt", work.join("rel.txt")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), work.join("abs.txt")).unwrap();
    std::os::unix::fs::symlink("../outside", work.join("outdir")).unwrap();
    std::os::unix::fs::symlink("sub/in.txt", work.join("in-link.txt")).unwrap();
    std::os::unix::fs::symlink("sub", work.join("in-dir")).unwrap();
    let wd = WorkDir::open(&work).unwrap();
    for name in ["rel.txt", "abs.txt", "outdir/secret.txt"] {
        assert!(matches!(head(&wd, name), Err(SandboxError::Escapes { .. })), "{name}");
    }
    assert_eq!(head(&wd, "in-link.txt").unwrap(), b"inside", "a link that stays inside is followed for reading");
    assert_eq!(head(&wd, "in-dir/in.txt").unwrap(), b"inside");
    assert!(matches!(wd.write(Path::new("outdir/new.txt"), b"x"), Err(SandboxError::Escapes { .. })));
    assert!(matches!(wd.write(Path::new("rel.txt"), b"PWNED"), Err(SandboxError::Symlink { .. })));
    assert!(matches!(wd.remove(Path::new("rel.txt")), Err(SandboxError::Symlink { .. })));
    assert!(matches!(wd.remove(Path::new("outdir/secret.txt")), Err(SandboxError::Escapes { .. })));
    assert!(matches!(wd.rename(Path::new("sub/in.txt"), Path::new("outdir/x.txt")), Err(SandboxError::Escapes { .. })));
    assert!(matches!(wd.rename(Path::new("in-link.txt"), Path::new("moved")), Err(SandboxError::Symlink { .. })));
    assert_eq!(fs::read_to_string(outside.join("secret.txt")).unwrap(), SECRET);
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1, "nothing was created outside");
    assert!(work.join("rel.txt").symlink_metadata().unwrap().file_type().is_symlink(), "the link is left alone");
    cleanup(&work);
}

/// Swap `victim` between a regular file and a link to the outside secret until `stop`.
fn swap_file_for_link(work: PathBuf, stop: Arc<AtomicBool>, swaps: Arc<AtomicU64>) {
    while !stop.load(Ordering::Relaxed) {
        let _ = fs::write(work.join(".f"), "inside");
        let _ = fs::rename(work.join(".f"), work.join("victim.txt"));
        let _ = std::os::unix::fs::symlink("../outside/secret.txt", work.join(".l"));
        let _ = fs::rename(work.join(".l"), work.join("victim.txt"));
        swaps.fetch_add(1, Ordering::Relaxed);
    }
}

/// Run `attempt` against a racing swapper (which counts its swaps in the counter it is given)
/// until both have done enough, or for at most about three seconds.
fn race(
    work: &Path,
    swapper: fn(PathBuf, Arc<AtomicBool>, Arc<AtomicU64>),
    mut attempt: impl FnMut(usize),
) -> (usize, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let racer = {
        let (work, stop, swaps) = (work.to_path_buf(), stop.clone(), swaps.clone());
        std::thread::spawn(move || swapper(work, stop, swaps))
    };
    let started = Instant::now();
    let mut done = 0;
    while (done < 2_000 || swaps.load(Ordering::Relaxed) < 500) && started.elapsed() < Duration::from_secs(3) {
        attempt(done);
        done += 1;
        if done % 64 == 0 {
            // Two cores may be shared with much else: let the racer run too.
            std::thread::yield_now();
        }
    }
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    (done, swaps.load(Ordering::Relaxed))
}

#[test]
fn a_file_swapped_for_a_link_out_never_leaks_or_changes_the_outside() {
    let (work, outside) = dirs("swap-file");
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::write(work.join("victim.txt"), "inside").unwrap();
    let wd = WorkDir::open(&work).unwrap();
    let mut leaks = 0;
    let mut reads = 0;
    let (tries, swaps) = race(&work, swap_file_for_link, |i| match i % 4 {
        0 | 1 => {
            if let Ok(bytes) = head(&wd, "victim.txt") {
                reads += 1;
                if bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()) {
                    leaks += 1;
                }
            }
        }
        2 => {
            let _ = wd.write(Path::new("victim.txt"), b"PWNED");
        }
        _ => {
            let _ = wd.remove(Path::new("victim.txt"));
        }
    });
    assert!(tries > 100 && swaps > 10, "the race ran ({tries} tries, {swaps} swaps)");
    assert!(reads > 0, "some reads got the inside file");
    assert_eq!(leaks, 0, "no read saw the outside content");
    assert_eq!(fs::read_to_string(outside.join("secret.txt")).unwrap(), SECRET, "the outside file is unchanged");
    cleanup(&work);
}

/// Swap the directory `sub` for a link to the outside directory and back until `stop`.
fn swap_dir_for_link(work: PathBuf, stop: Arc<AtomicBool>, swaps: Arc<AtomicU64>) {
    while !stop.load(Ordering::Relaxed) {
        let _ = fs::rename(work.join("sub"), work.join(".real"));
        let _ = std::os::unix::fs::symlink("../outside", work.join("sub"));
        let _ = fs::remove_file(work.join("sub"));
        let _ = fs::rename(work.join(".real"), work.join("sub"));
        swaps.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_directory_swapped_for_a_link_out_never_leaks_or_changes_the_outside() {
    let (work, outside) = dirs("swap-dir");
    fs::write(outside.join("f.txt"), SECRET).unwrap();
    fs::write(outside.join("only-outside.txt"), SECRET).unwrap();
    fs::create_dir(work.join("sub")).unwrap();
    fs::write(work.join("sub/f.txt"), "inside").unwrap();
    let wd = WorkDir::open(&work).unwrap();
    let mut leaks = 0;
    let (tries, swaps) = race(&work, swap_dir_for_link, |i| match i % 4 {
        0 => {
            if head(&wd, "sub/f.txt").is_ok_and(|b| b == SECRET.as_bytes()) {
                leaks += 1;
            }
        }
        1 => {
            let listed = wd.entries(Path::new("sub")).unwrap_or_default();
            if listed.iter().any(|e| e.name == "only-outside.txt") {
                leaks += 1;
            }
        }
        2 => {
            let _ = wd.write(Path::new("sub/new.txt"), b"PWNED");
        }
        _ => {
            let _ = wd.remove(Path::new("sub/f.txt"));
            let _ = wd.write(Path::new("sub/f.txt"), b"inside");
        }
    });
    assert!(tries > 100 && swaps > 10, "the race ran ({tries} tries, {swaps} swaps)");
    assert_eq!(leaks, 0, "no read or listing saw the outside directory");
    assert_eq!(fs::read_to_string(outside.join("f.txt")).unwrap(), SECRET, "the outside file is unchanged");
    assert!(!outside.join("new.txt").exists(), "nothing was written outside");
    cleanup(&work);
}

#[test]
fn a_hard_link_to_an_outside_file_is_refused_by_every_operation() {
    let (work, outside) = dirs("hardlink");
    fs::write(outside.join("s.txt"), SECRET).unwrap();
    fs::hard_link(outside.join("s.txt"), work.join("s.txt")).unwrap();
    let wd = WorkDir::open(&work).unwrap();
    let s = Path::new("s.txt");
    assert!(matches!(head(&wd, "s.txt"), Err(SandboxError::HardLinked { links: 2, .. })));
    assert!(matches!(wd.write(s, b"PWNED"), Err(SandboxError::HardLinked { .. })));
    assert!(matches!(wd.remove(s), Err(SandboxError::HardLinked { .. })));
    assert!(matches!(wd.rename(s, Path::new("t.txt")), Err(SandboxError::HardLinked { .. })));
    assert_eq!(fs::read_to_string(outside.join("s.txt")).unwrap(), SECRET);
    assert!(work.join("s.txt").exists());
    // Once the other name is gone, the file is an ordinary one.
    fs::remove_file(outside.join("s.txt")).unwrap();
    assert_eq!(head(&wd, "s.txt").unwrap(), SECRET.as_bytes());
    wd.write(s, b"new").unwrap();
    assert_eq!(fs::read_to_string(work.join("s.txt")).unwrap(), "new");
    cleanup(&work);
}

#[test]
fn a_write_replaces_the_name_and_keeps_the_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let (work, _outside) = dirs("write");
    let wd = WorkDir::open(&work).unwrap();
    wd.write(Path::new("a/b/c.txt"), b"one").unwrap();
    assert_eq!(fs::read_to_string(work.join("a/b/c.txt")).unwrap(), "one", "parents are created");
    fs::set_permissions(work.join("a/b/c.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    let before = fs::metadata(work.join("a/b/c.txt")).unwrap();
    wd.write(Path::new("a/b/c.txt"), b"two").unwrap();
    let after = fs::metadata(work.join("a/b/c.txt")).unwrap();
    assert_ne!(before.ino(), after.ino(), "a new file took the name");
    assert_eq!(after.permissions().mode() & 0o777, 0o640);
    assert_eq!(fs::read_to_string(work.join("a/b/c.txt")).unwrap(), "two");
    assert!(matches!(wd.write(Path::new("a"), b"x"), Err(SandboxError::IsDirectory { .. })));
    let under_a_file = wd.write(Path::new("a/b/c.txt/d"), b"x").unwrap_err();
    assert_eq!(under_a_file.io_kind(), Some(io::ErrorKind::NotADirectory), "{under_a_file}");
    assert!(matches!(wd.write(Path::new(""), b"x"), Err(SandboxError::WorkDirItself { .. })));
    let left: Vec<_> = fs::read_dir(work.join("a/b")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![OsString::from("c.txt")], "no temporary file is left behind");
    cleanup(&work);
}

#[test]
fn move_and_delete_work_on_files_and_directories_only() {
    let (work, _outside) = dirs("move");
    let wd = WorkDir::open(&work).unwrap();
    wd.write(Path::new("d/a.txt"), b"abc").unwrap();
    wd.write(Path::new("b.txt"), b"b").unwrap();
    assert!(matches!(wd.rename(Path::new("b.txt"), Path::new("d/a.txt")), Err(SandboxError::AlreadyExists { .. })));
    assert!(wd.rename(Path::new("nope"), Path::new("x")).unwrap_err().is_not_found());
    wd.rename(Path::new("b.txt"), Path::new("d/b.txt")).unwrap();
    wd.rename(Path::new("d"), Path::new("e")).unwrap();
    assert_eq!(head(&wd, "e/b.txt").unwrap(), b"b");
    assert!(matches!(wd.remove(Path::new("e")), Err(SandboxError::Io { .. })), "a non-empty directory stays");
    assert_eq!(wd.remove(Path::new("e/a.txt")).unwrap(), Removed::File { bytes: 3 });
    assert_eq!(wd.remove(Path::new("e/b.txt")).unwrap(), Removed::File { bytes: 1 });
    assert_eq!(wd.remove(Path::new("e")).unwrap(), Removed::EmptyDir);
    assert!(matches!(wd.remove(Path::new("")), Err(SandboxError::WorkDirItself { .. })));
    let gone = wd.remove(Path::new("e")).unwrap_err();
    assert!(gone.is_not_found());
    assert_eq!(gone.to_string(), "cannot delete e: No such file or directory (os error 2)");
    cleanup(&work);
}

#[test]
fn fifos_and_sockets_are_refused_without_blocking() {
    let (work, _outside) = dirs("fifo");
    let made = std::process::Command::new("mkfifo").arg(work.join("pipe")).status().unwrap();
    assert!(made.success());
    let _socket = std::os::unix::net::UnixListener::bind(work.join("sock")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let root = work.clone();
    // On a thread, so that a hang fails the test instead of stopping it.
    std::thread::spawn(move || {
        let wd = WorkDir::open(&root).unwrap();
        let results = [
            head(&wd, "pipe").err().map(|e| e.to_string()),
            head(&wd, "sock").err().map(|e| e.to_string()),
            wd.write(Path::new("pipe"), b"x").err().map(|e| e.to_string()),
            wd.remove(Path::new("pipe")).err().map(|e| e.to_string()),
        ];
        let _ = tx.send(results);
    });
    let results = rx.recv_timeout(Duration::from_secs(5)).expect("no operation on a FIFO blocks");
    assert_eq!(results[0].as_deref(), Some("pipe is a FIFO, not a regular file; it is not opened"));
    assert_eq!(results[1].as_deref(), Some("sock is a socket, not a regular file; it is not opened"));
    assert!(results.iter().all(|r| r.as_deref().is_some_and(|m| m.contains("not a regular file"))), "{results:?}");
    assert!(work.join("pipe").exists());
    cleanup(&work);
}

#[test]
fn a_sparse_gigabyte_is_read_in_a_bounded_window() {
    let (work, _outside) = dirs("sparse");
    let big = fs::File::create(work.join("big")).unwrap();
    big.set_len(1 << 30).unwrap();
    drop(big);
    let wd = WorkDir::open(&work).unwrap();
    let started = Instant::now();
    let out = wd.read(Path::new("big"), 0, 16 * 1024).unwrap();
    assert_eq!((out.bytes.len(), out.file_len, out.at_end), (16 * 1024, 1 << 30, false));
    let tail = wd.read(Path::new("big"), (1 << 30) - 10, 16 * 1024).unwrap();
    assert_eq!((tail.bytes.len(), tail.start, tail.at_end), (10, (1 << 30) - 10, true));
    assert!(started.elapsed() < Duration::from_secs(5), "bounded work, not the whole gigabyte");
    cleanup(&work);
}

#[test]
fn a_read_says_whether_it_reached_the_end_at_every_bound() {
    let (work, _outside) = dirs("bounds");
    fs::write(work.join("ten"), "0123456789").unwrap();
    let wd = WorkDir::open(&work).unwrap();
    let read = |start, max| {
        let out = wd.read(Path::new("ten"), start, max).unwrap();
        (String::from_utf8(out.bytes).unwrap(), out.file_len, out.at_end)
    };
    assert_eq!(read(0, 100), ("0123456789".into(), 10, true));
    assert_eq!(read(0, 10), ("0123456789".into(), 10, true));
    assert_eq!(read(0, 9), ("012345678".into(), 10, false));
    assert_eq!(read(0, 0), (String::new(), 10, false));
    assert_eq!(read(4, 6), ("456789".into(), 10, true));
    assert_eq!(read(4, 5), ("45678".into(), 10, false));
    assert_eq!(read(10, 5), (String::new(), 10, true));
    assert_eq!(read(25, 5), (String::new(), 10, true));
    fs::write(work.join("empty"), "").unwrap();
    let empty = wd.read(Path::new("empty"), 0, 5).unwrap();
    assert_eq!((empty.bytes.len(), empty.file_len, empty.at_end), (0, 0, true));
    cleanup(&work);
}

#[test]
fn entries_say_what_each_name_is() {
    let (work, _outside) = dirs("entries");
    fs::create_dir(work.join("d")).unwrap();
    fs::write(work.join("d/f"), "x").unwrap();
    std::os::unix::fs::symlink("d", work.join("to-d")).unwrap();
    std::os::unix::fs::symlink("../outside", work.join("to-out")).unwrap();
    std::process::Command::new("mkfifo").arg(work.join("p")).status().unwrap();
    let wd = WorkDir::open(&work).unwrap();
    let mut entries = wd.entries(Path::new("")).unwrap();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let seen: Vec<_> = entries.iter().map(|e| (e.name_lossy(), e.kind, e.target)).collect();
    assert_eq!(
        seen,
        vec![
            ("d".into(), EntryKind::Dir, Some(EntryKind::Dir)),
            ("p".into(), EntryKind::Other, Some(EntryKind::Other)),
            ("to-d".into(), EntryKind::Symlink, Some(EntryKind::Dir)),
            ("to-out".into(), EntryKind::Symlink, None),
        ]
    );
    let sub = wd.entries(Path::new("to-d")).unwrap();
    assert_eq!(sub.len(), 1);
    assert!(matches!(wd.entries(Path::new("to-out")), Err(SandboxError::Escapes { .. })));
    assert_eq!(wd.entries(Path::new("d/f")).unwrap_err().io_kind(), Some(io::ErrorKind::NotADirectory));
    assert_eq!(wd.kind(Path::new("to-d")).unwrap(), EntryKind::Symlink);
    assert_eq!(wd.target_kind(Path::new("to-d")).unwrap(), EntryKind::Dir);
    cleanup(&work);
}

#[test]
fn very_long_names_fail_cleanly() {
    let (work, _outside) = dirs("long");
    let wd = WorkDir::open(&work).unwrap();
    let long_name = "n".repeat(300);
    for result in [
        head(&wd, &long_name).map(|_| ()),
        wd.write(Path::new(&long_name), b"x"),
        wd.remove(Path::new(&long_name)).map(|_| ()),
        wd.rename(Path::new(&long_name), Path::new("x")),
        wd.entries(Path::new(&long_name)).map(|_| ()),
    ] {
        let message = result.unwrap_err().to_string();
        assert!(message.contains("nnnn"), "names the path: {message}");
    }
    let long_path = "d/".repeat(2100) + "f";
    assert!(matches!(wd.write(Path::new(&long_path), b"x"), Err(SandboxError::TooLong { .. })));
    assert!(matches!(head(&wd, &long_path), Err(SandboxError::TooLong { .. })));
    assert!(!work.join("d").exists(), "nothing was created for it");
    assert!(matches!(wd.write(Path::new(&long_name), b"x"), Err(SandboxError::TooLong { .. })));
    cleanup(&work);
}

//! The files of a listing not read yet (`files` minus `readFiles`, in the order of `files`),
//! kept from one step to the next.
//!
//! Both lists grow with a run, and `toolsFor` and `fileOptions` ask for the unread files at
//! every step; computed afresh, each step paid for every file read so far. A run changes the
//! lists by appending — the same listing, the read list one name longer — so the answer is
//! kept per thread with the lists it was made from, and the next call with lists that extend
//! them only marks the new reads. The kept lists are compared with the cells at every call
//! (a string comparison a name, far cheaper than hashing it); anything else (another listing,
//! a read list that is not an extension) builds the answer afresh. So the answer is always
//! what the cells say, whatever called before.

use std::cell::RefCell;

use serde_json::Value;

use decision_protocol::ask::ReadCells;

/// The unread files of a listing: how many, and the first of them in listing order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unread<'a> {
    /// How many entries of `files` are not in `readFiles` (a name listed twice counts twice).
    pub count: usize,
    /// The first unread entries, at most as many as were asked for.
    pub first: Vec<&'a str>,
}

/// The unread files of `cells` (`files` minus `readFiles`; entries that are not strings are
/// neither files nor reads), with the first `first` of them.
pub(crate) fn unread<'a>(cells: ReadCells<'a>, first: usize) -> Unread<'a> {
    let files = entries(cells.get("files"));
    let read = entries(cells.get("readFiles"));
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let memo = match kept.as_mut() {
            Some(memo) if memo.extends_to(files, read) => memo,
            _ => kept.insert(Memo::of(files)),
        };
        memo.read_more(read);
        memo.answer(files, first)
    })
}

thread_local! {
    /// The last answer made on this thread, with the lists it was made from.
    static KEPT: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// The entries of a list cell (nothing for a missing cell or one that is not a list).
fn entries(cell: Option<&Value>) -> &[Value] {
    cell.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// What is kept between calls.
struct Memo {
    /// The `files` cell it was made from, entry by entry (`None`: not a string).
    files: Vec<Option<Box<str>>>,
    /// The `readFiles` entries already taken into account, entry by entry.
    read: Vec<Option<Box<str>>>,
    /// The position in `files` of each name's first entry.
    first_of: foldhash::HashMap<Box<str>, usize>,
    /// The position of the same name's next entry, for a name listed more than once.
    next_same: Vec<Option<usize>>,
    /// Which entries of `files` are unread.
    unread: Vec<bool>,
    /// How many are.
    count: usize,
    /// No unread entry comes before this position.
    start: usize,
}

/// Whether a kept entry is the cell's entry.
fn same(kept: &Option<Box<str>>, entry: &Value) -> bool {
    kept.as_deref() == entry.as_str()
}

impl Memo {
    /// A memo for the listing `files`, nothing read yet.
    fn of(files: &[Value]) -> Memo {
        let mut first_of = foldhash::HashMap::default();
        let mut next_same = vec![None; files.len()];
        let mut last_of: foldhash::HashMap<&str, usize> = foldhash::HashMap::default();
        for (position, name) in files.iter().enumerate().filter_map(|(at, entry)| Some((at, entry.as_str()?))) {
            match last_of.insert(name, position) {
                Some(previous) => {
                    if let Some(next) = next_same.get_mut(previous) {
                        *next = Some(position);
                    }
                }
                None => {
                    first_of.insert(Box::from(name), position);
                }
            }
        }
        let unread: Vec<bool> = files.iter().map(Value::is_string).collect();
        let count = unread.iter().filter(|unread| **unread).count();
        let files = files.iter().map(|entry| entry.as_str().map(Box::from)).collect();
        Memo { files, read: Vec::new(), first_of, next_same, unread, count, start: 0 }
    }

    /// The cells hold the same listing, and a read list that begins with the reads taken
    /// into account.
    fn extends_to(&self, files: &[Value], read: &[Value]) -> bool {
        self.files.len() == files.len()
            && read.len() >= self.read.len()
            && self.files.iter().zip(files).all(|(kept, entry)| same(kept, entry))
            && self.read.iter().zip(read).all(|(kept, entry)| same(kept, entry))
    }

    /// Marks the reads of `read` past those taken into account.
    fn read_more(&mut self, read: &[Value]) {
        for entry in read.get(self.read.len()..).unwrap_or_default() {
            let name = entry.as_str();
            let mut at = name.and_then(|name| self.first_of.get(name)).copied();
            while let Some(position) = at {
                if let Some(unread) = self.unread.get_mut(position).filter(|unread| **unread) {
                    *unread = false;
                    self.count -= 1;
                }
                at = self.next_same.get(position).copied().flatten();
            }
            self.read.push(name.map(Box::from));
        }
        while self.unread.get(self.start) == Some(&false) {
            self.start += 1;
        }
    }

    /// The answer, its names borrowed from the cell `files` (which holds the kept names).
    fn answer<'a>(&self, files: &'a [Value], first: usize) -> Unread<'a> {
        let first = (self.start..self.unread.len())
            .filter(|&position| self.unread.get(position) == Some(&true))
            .filter_map(|position| files.get(position).and_then(Value::as_str))
            .take(first)
            .collect();
        Unread { count: self.count, first }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    fn cells(files: &[&str], read: &[&str]) -> Map<String, Value> {
        json!({"files": files, "readFiles": read}).as_object().cloned().unwrap_or_default()
    }

    /// The answer computed afresh, as the definition says.
    fn by_definition(files: &[&str], read: &[&str], first: usize) -> (usize, Vec<String>) {
        let unread: Vec<&str> = files.iter().copied().filter(|f| !read.contains(f)).collect();
        (unread.len(), unread.iter().take(first).map(|f| (*f).to_owned()).collect())
    }

    fn check(files: &[&str], read: &[&str], first: usize) {
        let state = cells(files, read);
        let got = unread(ReadCells::all(&state), first);
        let got = (got.count, got.first.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>());
        assert_eq!(got, by_definition(files, read, first), "files {files:?}, read {read:?}");
    }

    #[test]
    fn a_run_that_reads_one_file_a_step_is_answered_as_by_definition() {
        let files: Vec<String> = (0..30).map(|i| format!("f{i:02}.py")).collect();
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        // Out of listing order, one more each step: each call extends the kept lists.
        let order: Vec<&str> = files.iter().rev().step_by(2).chain(files.iter().step_by(2)).copied().collect();
        for reads in 0..=order.len() {
            check(&files, &order[..reads], 5);
        }
    }

    #[test]
    fn a_list_that_is_not_an_extension_is_answered_afresh() {
        check(&["a", "b", "c"], &["a", "b"], 5);
        // The read list changed, not extended: `b` is unread again.
        check(&["a", "b", "c"], &["a"], 5);
        check(&["a", "b", "c"], &["c", "a"], 5);
        // Another listing with the same length, then a longer one.
        check(&["a", "x", "c"], &["c", "a"], 5);
        check(&["a", "x", "c", "d"], &["c", "a"], 1);
        // Another thread's calls or another run's in between change nothing: the lists are compared.
        check(&["p", "q"], &[], 5);
        check(&["a", "x", "c", "d"], &["c", "a", "d"], 5);
    }

    #[test]
    fn names_listed_twice_read_twice_or_not_strings_count_as_the_definition_says() {
        check(&["a", "b", "a", "c"], &[], 5);
        check(&["a", "b", "a", "c"], &["a"], 5);
        check(&["a", "b", "a", "c"], &["a", "a", "c"], 5);
        check(&["a", "b", "a", "c"], &["a", "a", "c", "zzz"], 0);
        let odd = json!({"files": ["a", 3, null, "b"], "readFiles": [true, "b"]});
        let odd = odd.as_object().cloned().unwrap_or_default();
        let got = unread(ReadCells::all(&odd), 5);
        assert_eq!(got, Unread { count: 1, first: vec!["a"] });
        let missing = Map::new();
        assert_eq!(unread(ReadCells::all(&missing), 5), Unread { count: 0, first: vec![] });
    }
}

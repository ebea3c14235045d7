//! The text of `str` objects read from Python, kept by object. With the ABI of Python 3.9,
//! reading a str's text means encoding it into a new bytes object and copying that; a
//! host's state is mostly the same objects from call to call (its keys are literals or
//! interned names, and most values stay as they were: the task, the files, the history so
//! far), so each object's text is read once and then copied.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyString;

/// Strings longer than this are read each time (and not kept alive here).
const KEPT_BYTES: usize = 256;
/// At most this many strings are kept; when there are this many, they are all let go (a
/// host's current strings are then read again and kept again).
const KEPT: usize = 4096;

/// Each text by its object's identity, with the object: holding it keeps its identity from
/// passing to another object, and a str never changes.
type Kept = HashMap<usize, (Py<PyString>, String), foldhash::fast::RandomState>;

/// The texts read, kept for the process, not per thread: hosts call from thread pools that
/// make new threads (LangChain runs each tool call on a fresh one), and a cache per thread
/// started empty on each and was let go at every thread's end. Every use holds the GIL and
/// calls no Python code while it holds the lock; `try_lock` makes a use that finds it held
/// (it never waits) read the text afresh.
static READ: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);

/// The text of a `str`. Only exact strs are kept: an instance of a subclass may hold other
/// objects, which would be kept alive with it.
pub fn text_of(object: &Bound<'_, PyString>) -> PyResult<String> {
    if !object.is_exact_instance_of::<PyString>() {
        return Ok(object.to_cow()?.into_owned());
    }
    let identity = object.as_ptr() as usize;
    let Ok(mut read) = READ.try_lock() else { return Ok(object.to_cow()?.into_owned()) };
    if let Some((_, text)) = read.get(&identity) {
        return Ok(text.clone());
    }
    let text = object.to_cow()?.into_owned();
    if text.len() <= KEPT_BYTES {
        if read.len() >= KEPT {
            read.clear();
        }
        read.insert(identity, (object.clone().unbind(), text.clone()));
    }
    Ok(text)
}

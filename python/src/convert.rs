//! JSON values to Python objects and back, directly (no text in between).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::read;

/// How deeply dicts and lists may nest in a value crossing between Python and the engine:
/// the bound every JSON text the engine reads has (`serde_json`'s), so a host's value is
/// held to what the same value written as a file would be, far above anything a state or a
/// record holds. Conversion, and the engine's own work on the value, recurse once per level:
/// the bound keeps that inside a small thread stack (a 256 KiB one, even in a debug build).
/// A value that nests deeper (or a dict or list that contains itself) is a `ValueError`,
/// never a crash of the interpreter.
pub const MAX_DEPTH: usize = 128;

/// A JSON value as Python: dicts (in key order), lists, str, int, float, bool, None.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    to_py_at(py, value, 0)
}

fn to_py_at<'py>(py: Python<'py>, value: &Value, depth: usize) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => kept_string(py, &VALUES, s, KEPT_VALUE_BYTES, KEPT_VALUES).into_any(),
        Value::Array(items) => {
            let depth = deeper_out(depth)?;
            let converted = items.iter().map(|item| to_py_at(py, item, depth)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, converted)?.into_any()
        }
        Value::Object(map) => {
            let depth = deeper_out(depth)?;
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(kept_key(py, key), to_py_at(py, item, depth)?)?;
            }
            dict.into_any()
        }
    })
}

/// One level deeper into a value going out to Python. The engine's values come from JSON
/// text or from Python (both nested at most [`MAX_DEPTH`] deep), with a few levels of
/// document around them; the check keeps the recursion bounded whatever a later change
/// lets through.
fn deeper_out(depth: usize) -> PyResult<usize> {
    if depth >= 2 * MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "a result nests dicts and lists more than {} deep and cannot be returned",
            2 * MAX_DEPTH
        )));
    }
    Ok(depth + 1)
}

/// A dict key as a Python string, kept for reuse when it is short.
pub fn kept_key<'py>(py: Python<'py>, key: &str) -> Bound<'py, PyString> {
    kept_string(py, &KEYS, key, KEPT_KEY_BYTES, KEPT_KEYS)
}

/// Keys longer than this are not kept (the documents' own keys are short).
const KEPT_KEY_BYTES: usize = 48;
/// At most this many keys are kept, so keys taken from host data cannot grow the cache
/// without bound.
const KEPT_KEYS: usize = 2048;
/// String values up to this long are kept: a block's questions, criteria, field names and
/// exclusion reasons come back in every frame document.
const KEPT_VALUE_BYTES: usize = 256;
/// At most this many values are kept (the first ones seen: a contract's own text comes
/// first, with the first frame of each block).
const KEPT_VALUES: usize = 4096;

type Kept = LazyLock<Mutex<HashMap<String, Py<PyString>, foldhash::fast::RandomState>>>;

// Kept for the process, not per thread: hosts call from thread pools that make new threads
// (LangChain runs each tool call on a fresh one), and a cache per thread started empty on each
// and was let go at every thread's end. Every use holds the GIL and calls no Python code
// while it holds the lock; `try_lock` makes a use that finds it held (it never waits) make
// its string afresh.
/// The documents' keys repeat from call to call (`block`, `frame`, `state`, `key`, …): each is
/// made into a Python string once and reused, with its hash already computed.
static KEYS: Kept = LazyLock::new(Mutex::default);
/// Short string values, kept the same way (Python strings are immutable, so sharing one
/// between documents is safe).
static VALUES: Kept = LazyLock::new(Mutex::default);

/// A Python string for `text`, made once and kept in `cache` while it has room.
fn kept_string<'py>(
    py: Python<'py>,
    cache: &Kept,
    text: &str,
    max_bytes: usize,
    max_entries: usize,
) -> Bound<'py, PyString> {
    if text.len() > max_bytes {
        return PyString::new(py, text);
    }
    let Ok(mut kept) = cache.try_lock() else { return PyString::new(py, text) };
    if let Some(found) = kept.get(text) {
        return found.bind(py).clone();
    }
    let made = PyString::new(py, text);
    if kept.len() < max_entries {
        kept.insert(text.to_owned(), made.clone().unbind());
    }
    made
}

/// A Python object as a JSON value: dict (str keys), list, tuple, str, int, float (finite),
/// bool, None. Anything else is a `TypeError`; dicts, lists and tuples nested more than
/// [`MAX_DEPTH`] deep, or one that contains itself, a `ValueError`.
pub fn from_py(object: &Bound<'_, PyAny>) -> PyResult<Value> {
    Reader::default().value(object)
}

/// Converts one value, keeping the containers it is inside of (their addresses, outermost
/// first) so that depth is bounded and a cycle is told from mere depth.
#[derive(Default)]
struct Reader {
    path: Vec<usize>,
}

impl Reader {
    fn value(&mut self, object: &Bound<'_, PyAny>) -> PyResult<Value> {
        // A host's state is mostly exact strs, dicts and lists: each is told by one
        // comparison of the type (the checks below also take subclasses, at the cost of a
        // look at the type's flags or bases).
        if let Ok(s) = object.cast_exact::<PyString>() {
            return Ok(Value::String(read::text_of(s)?));
        }
        if let Ok(dict) = object.cast_exact::<PyDict>() {
            return Ok(Value::Object(self.dict(dict)?));
        }
        if let Ok(list) = object.cast_exact::<PyList>() {
            return self.list(list);
        }
        if object.is_none() {
            return Ok(Value::Null);
        }
        if let Ok(b) = object.cast::<PyBool>() {
            return Ok(Value::Bool(b.is_true()));
        }
        if let Ok(i) = object.cast::<PyInt>() {
            if let Ok(v) = i.extract::<i64>() {
                return Ok(Value::from(v));
            }
            if let Ok(v) = i.extract::<u64>() {
                return Ok(Value::from(v));
            }
            return Err(PyValueError::new_err("an integer outside the 64-bit range cannot be JSON here"));
        }
        if let Ok(f) = object.cast::<PyFloat>() {
            return Number::from_f64(f.value())
                .map(Value::Number)
                .ok_or_else(|| PyValueError::new_err("NaN and infinities are not JSON numbers"));
        }
        if let Ok(s) = object.cast::<PyString>() {
            return Ok(Value::String(s.to_cow()?.into_owned()));
        }
        if let Ok(dict) = object.cast::<PyDict>() {
            return Ok(Value::Object(self.dict(dict)?));
        }
        if let Ok(list) = object.cast::<PyList>() {
            return self.list(list);
        }
        if let Ok(tuple) = object.cast::<PyTuple>() {
            self.enter(object)?;
            let items = tuple.iter().map(|item| self.value(&item)).collect::<PyResult<Vec<_>>>();
            self.path.pop();
            return items.map(Value::Array);
        }
        Err(PyTypeError::new_err(format!("cannot be JSON: an object of type {}", object.get_type().name()?)))
    }

    fn list(&mut self, list: &Bound<'_, PyList>) -> PyResult<Value> {
        self.enter(list.as_any())?;
        let mut items = Vec::with_capacity(list.len());
        for item in list.iter() {
            match self.value(&item) {
                Ok(value) => items.push(value),
                Err(error) => {
                    self.path.pop();
                    return Err(error);
                }
            }
        }
        self.path.pop();
        Ok(Value::Array(items))
    }

    fn dict(&mut self, dict: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
        self.enter(dict.as_any())?;
        let map = self.members(dict);
        self.path.pop();
        map
    }

    fn members(&mut self, dict: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
        let mut map = Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            map.insert(read_key(&key)?, self.value(&item)?);
        }
        Ok(map)
    }

    /// One level deeper, into `container`; refused past [`MAX_DEPTH`]. Only then is the path
    /// searched for the container itself, so a cycle costs nothing until it is found (a
    /// cycle is always found there: it repeats until the path is that deep).
    fn enter(&mut self, container: &Bound<'_, PyAny>) -> PyResult<()> {
        let address = container.as_ptr() as usize;
        if self.path.len() >= MAX_DEPTH {
            let message = if self.path.contains(&address) {
                format!(
                    "a {} contains itself: a cyclic value cannot be JSON",
                    container.get_type().name().map(|name| name.to_string()).unwrap_or_else(|_| "value".to_owned())
                )
            } else {
                format!("dicts and lists nest more than {MAX_DEPTH} deep: too deep to be read here")
            };
            return Err(PyValueError::new_err(message));
        }
        self.path.push(address);
        Ok(())
    }
}

/// A dict key's text.
fn read_key(key: &Bound<'_, PyAny>) -> PyResult<String> {
    match key.cast::<PyString>() {
        Ok(key) => read::text_of(key),
        Err(_) => Err(PyTypeError::new_err("JSON object keys must be str")),
    }
}

/// A dict as a JSON object; `what` names it in the error.
pub fn object_from_py(object: &Bound<'_, PyAny>, what: &str) -> PyResult<Map<String, Value>> {
    match object.cast::<PyDict>() {
        Ok(dict) => Reader::default().dict(dict),
        // The argument is wrong, as a state or answers that are not a JSON object are in the
        // CLI and the npm package: the same `UsageError` (`E_USAGE`), naming the argument.
        Err(_) => Err(crate::errors::usage_error(object.py(), &format!("{what} must be a dict"), Some(what))),
    }
}

/// A command's request (its options, as [`decision::api::request`] reads them) from the
/// keywords a method was given: `None` is "not given"
/// (the option keeps its default). A keyword the command does not take, or a value of the
/// wrong type, is the one `UsageError` every entrance gives, naming the command.
pub fn request_from_py<T: serde::de::DeserializeOwned + Default>(
    py: Python<'_>,
    command: &str,
    keywords: Option<&Bound<'_, PyDict>>,
) -> PyResult<T> {
    let Some(keywords) = keywords else { return Ok(T::default()) };
    let mut given = Vec::with_capacity(keywords.len());
    for (key, value) in keywords.iter() {
        if value.is_none() {
            continue;
        }
        let key = key.cast_into::<PyString>().map_err(|_| PyTypeError::new_err("keyword names must be str"))?;
        given.push((read::text_of(&key)?, from_py(&value)?));
    }
    // Read as a map of names to JSON values, as `api::request` reads the JavaScript options.
    let options = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(given.into_iter());
    decision::api::request_from(command, options).map_err(crate::errors::to_py_err(py))
}

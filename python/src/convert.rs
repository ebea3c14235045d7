//! JSON values to Python objects and back, directly (no text in between).

use std::cell::RefCell;
use std::collections::HashMap;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::read;

/// A JSON value as Python: dicts (in key order), lists, str, int, float, bool, None.
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
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
            let converted = items.iter().map(|item| to_py(py, item)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, converted)?.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(kept_key(py, key), to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
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

type Kept = RefCell<HashMap<String, Py<PyString>, foldhash::fast::RandomState>>;

thread_local! {
    /// The documents' keys repeat from call to call (`block`, `frame`, `state`, `key`, …):
    /// each is made into a Python string once and reused, with its hash already computed.
    static KEYS: Kept = RefCell::default();
    /// Short string values, kept the same way (Python strings are immutable, so sharing one
    /// between documents is safe).
    static VALUES: Kept = RefCell::default();
}

/// A Python string for `text`, made once and kept in `cache` while it has room.
fn kept_string<'py>(
    py: Python<'py>,
    cache: &'static std::thread::LocalKey<Kept>,
    text: &str,
    max_bytes: usize,
    max_entries: usize,
) -> Bound<'py, PyString> {
    if text.len() > max_bytes {
        return PyString::new(py, text);
    }
    cache.with(|kept| {
        let Ok(mut kept) = kept.try_borrow_mut() else { return PyString::new(py, text) };
        if let Some(found) = kept.get(text) {
            return found.bind(py).clone();
        }
        let made = PyString::new(py, text);
        if kept.len() < max_entries {
            kept.insert(text.to_owned(), made.clone().unbind());
        }
        made
    })
}

/// A Python object as a JSON value: dict (str keys), list, tuple, str, int, float (finite),
/// bool, None. Anything else is a `TypeError`.
pub fn from_py(object: &Bound<'_, PyAny>) -> PyResult<Value> {
    // A host's state is mostly exact strs, dicts and lists: each is told by one comparison
    // of the type (the checks below also take subclasses, at the cost of a look at the
    // type's flags or bases).
    if let Ok(s) = object.cast_exact::<PyString>() {
        return Ok(Value::String(read::text_of(s)?));
    }
    if let Ok(dict) = object.cast_exact::<PyDict>() {
        return Ok(Value::Object(dict_to_map(dict)?));
    }
    if let Ok(list) = object.cast_exact::<PyList>() {
        return list_to_array(list);
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
        return Ok(Value::Object(dict_to_map(dict)?));
    }
    if let Ok(list) = object.cast::<PyList>() {
        return list_to_array(list);
    }
    if let Ok(tuple) = object.cast::<PyTuple>() {
        return tuple.iter().map(|item| from_py(&item)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    Err(PyTypeError::new_err(format!("cannot be JSON: an object of type {}", object.get_type().name()?)))
}

fn list_to_array(list: &Bound<'_, PyList>) -> PyResult<Value> {
    let mut items = Vec::with_capacity(list.len());
    for item in list.iter() {
        items.push(from_py(&item)?);
    }
    Ok(Value::Array(items))
}

fn dict_to_map(dict: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
    let mut map = Map::with_capacity(dict.len());
    for (key, item) in dict.iter() {
        map.insert(read_key(&key)?, from_py(&item)?);
    }
    Ok(map)
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
        Ok(dict) => dict_to_map(dict),
        Err(_) => Err(PyTypeError::new_err(format!("{what} must be a dict"))),
    }
}

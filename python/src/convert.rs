//! JSON values to Python objects and back, directly (no text in between).

use std::cell::RefCell;
use std::collections::HashMap;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

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
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let converted = items.iter().map(|item| to_py(py, item)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, converted)?.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key_string(py, key), to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// Keys longer than this are not kept (the documents' own keys are short).
const KEPT_KEY_BYTES: usize = 48;
/// At most this many keys are kept, so keys taken from host data cannot grow the cache
/// without bound.
const KEPT_KEYS: usize = 2048;

thread_local! {
    /// The documents' keys repeat from call to call (`block`, `frame`, `state`, `key`, …):
    /// each is made into a Python string once and reused, with its hash already computed,
    /// which takes about a third off building a frame document.
    static KEYS: RefCell<HashMap<String, Py<PyString>, foldhash::fast::RandomState>> = RefCell::default();
}

fn key_string<'py>(py: Python<'py>, key: &str) -> Bound<'py, PyString> {
    if key.len() > KEPT_KEY_BYTES {
        return PyString::new(py, key);
    }
    KEYS.with(|keys| {
        let mut keys = keys.borrow_mut();
        if let Some(kept) = keys.get(key) {
            return kept.bind(py).clone();
        }
        let made = PyString::new(py, key);
        if keys.len() < KEPT_KEYS {
            keys.insert(key.to_owned(), made.clone().unbind());
        }
        made
    })
}

/// A Python object as a JSON value: dict (str keys), list, tuple, str, int, float (finite),
/// bool, None. Anything else is a `TypeError`.
pub fn from_py(object: &Bound<'_, PyAny>) -> PyResult<Value> {
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
        return list.iter().map(|item| from_py(&item)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    if let Ok(tuple) = object.cast::<PyTuple>() {
        return tuple.iter().map(|item| from_py(&item)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    Err(PyTypeError::new_err(format!("cannot be JSON: an object of type {}", object.get_type().name()?)))
}

fn dict_to_map(dict: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
    let mut map = Map::with_capacity(dict.len());
    for (key, item) in dict.iter() {
        let key = key
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("JSON object keys must be str"))?
            .to_cow()?
            .into_owned();
        map.insert(key, from_py(&item)?);
    }
    Ok(map)
}

/// A dict as a JSON object; `what` names it in the error.
pub fn object_from_py(object: &Bound<'_, PyAny>, what: &str) -> PyResult<Map<String, Value>> {
    match object.cast::<PyDict>() {
        Ok(dict) => dict_to_map(dict),
        Err(_) => Err(PyTypeError::new_err(format!("{what} must be a dict"))),
    }
}

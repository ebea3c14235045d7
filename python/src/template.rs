//! Documents made like an earlier one. A block's frame documents differ from call to call
//! only in the parts that come from the state (the state, its digests, what was cut or left
//! out); the rest — the questions, the fields, the exclusions and their reasons — is the same
//! every time. A [`Template`] keeps an earlier document with the Python objects made for it,
//! and a new document copies the objects of every part equal to the template's (a dict or
//! list copy keeps the keys' hashes and shares the immutable strings and numbers) instead of
//! making them again from UTF-8.
//!
//! The template's own objects are never handed out, only copies of them, so a host that
//! changes a returned dict cannot change a later document.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::{Number, Value};

use crate::convert::{kept_key, to_py};

/// An earlier document and the Python objects made from it.
pub struct Template {
    value: Value,
    made: Made,
}

/// The Python objects made for one value of a template, with those of its members: a copy
/// finds the dicts and lists to make afresh here, without reading the objects back.
enum Made {
    /// A string, number, boolean or None: immutable, so shared by every copy.
    Leaf(Py<PyAny>),
    /// A dict, its keys and its members in order, and the positions of the members that
    /// are dicts or lists themselves (a copy makes those afresh, and shares the rest).
    Dict { dict: Py<PyDict>, keys: Vec<Py<PyString>>, members: Vec<Made>, nested: Vec<usize> },
    /// A list, its members, and the positions of those that are dicts or lists.
    List { list: Py<PyList>, members: Vec<Made>, nested: Vec<usize> },
}

impl Template {
    /// A template of `value` (its Python objects are made now).
    pub fn new(py: Python<'_>, value: Value) -> PyResult<Template> {
        let made = make(py, &value)?;
        Ok(Template { value, made })
    }

    /// A fresh copy of the template's own value.
    pub fn copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.made.copy(py)
    }

    /// `value` as [`to_py`] makes it, with the parts equal to the template's copied from it.
    pub fn to_py<'py>(&self, py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
        like(py, value, &self.value, &self.made)
    }
}

/// The objects of `value`, made as [`to_py`] makes them.
fn make(py: Python<'_>, value: &Value) -> PyResult<Made> {
    Ok(match value {
        Value::Object(map) => {
            let dict = PyDict::new(py);
            let mut keys = Vec::with_capacity(map.len());
            let mut members = Vec::with_capacity(map.len());
            for (key, item) in map {
                let key = kept_key(py, key);
                let member = make(py, item)?;
                dict.set_item(&key, member.object(py))?;
                keys.push(key.unbind());
                members.push(member);
            }
            Made::Dict { dict: dict.unbind(), keys, nested: nested(map.values()), members }
        }
        Value::Array(items) => {
            let members = items.iter().map(|item| make(py, item)).collect::<PyResult<Vec<_>>>()?;
            let list = PyList::new(py, members.iter().map(|member| member.object(py)))?;
            Made::List { list: list.unbind(), nested: nested(items.iter()), members }
        }
        _ => Made::Leaf(to_py(py, value)?.unbind()),
    })
}

/// The positions of the dicts and lists among `values`.
fn nested<'a>(values: impl Iterator<Item = &'a Value>) -> Vec<usize> {
    values
        .enumerate()
        .filter(|(_, value)| matches!(value, Value::Object(_) | Value::Array(_)))
        .map(|(i, _)| i)
        .collect()
}

impl Made {
    fn object<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        match self {
            Made::Leaf(object) => object.bind(py),
            Made::Dict { dict, .. } => dict.bind(py).as_any(),
            Made::List { list, .. } => list.bind(py).as_any(),
        }
    }

    /// A fresh copy: new dicts and lists (a dict copy keeps its keys' hashes), the same
    /// strings and numbers.
    fn copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Made::Leaf(object) => Ok(object.bind(py).clone()),
            Made::Dict { dict, keys, members, nested } => {
                let copied = dict.bind(py).copy()?;
                for &index in nested {
                    if let (Some(key), Some(member)) = (keys.get(index), members.get(index)) {
                        copied.set_item(key.bind(py), member.copy(py)?)?;
                    }
                }
                Ok(copied.into_any())
            }
            Made::List { list, members, nested } => {
                let copied = list.bind(py).get_slice(0, members.len());
                for &index in nested {
                    if let Some(member) = members.get(index) {
                        copied.set_item(index, member.copy(py)?)?;
                    }
                }
                Ok(copied.into_any())
            }
        }
    }
}

/// `value` as Python, reusing `made` (the objects of `old`) wherever the two are the same.
fn like<'py>(py: Python<'py>, value: &Value, old: &Value, made: &Made) -> PyResult<Bound<'py, PyAny>> {
    if same(value, old) {
        return made.copy(py);
    }
    match (value, old, made) {
        (Value::Object(map), Value::Object(old_map), Made::Dict { keys, members, .. }) => {
            let dict = PyDict::new(py);
            let earlier = || old_map.iter().zip(keys.iter().zip(members));
            // The keys mostly come in the template's order: each is first looked for in the
            // same place, then among all.
            let mut in_order = earlier();
            for (key, item) in map {
                let model = match in_order.next() {
                    Some(((old_key, old_item), model)) if old_key == key => Some((old_item, model)),
                    _ => earlier()
                        .find(|((old_key, _), _)| *old_key == key)
                        .map(|((_, old_item), model)| (old_item, model)),
                };
                match model {
                    Some((old_item, (key_object, member))) => {
                        dict.set_item(key_object.bind(py), like(py, item, old_item, member)?)?;
                    }
                    None => dict.set_item(kept_key(py, key), to_py(py, item)?)?,
                }
            }
            Ok(dict.into_any())
        }
        (Value::Array(items), Value::Array(old_items), Made::List { members, .. }) => {
            let mut models = old_items.iter().zip(members);
            let converted = items
                .iter()
                .map(|item| match models.next() {
                    Some((old_item, member)) => like(py, item, old_item, member),
                    None => to_py(py, item),
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, converted)?.into_any())
        }
        _ => to_py(py, value),
    }
}

/// Equal as Python would show them: keys in the same order, and numbers of the same kind and
/// bits (`0.0` and `-0.0` compare equal as floats but are different Python floats).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => same_number(a, b),
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        _ => false,
    }
}

fn same_number(a: &Number, b: &Number) -> bool {
    match (a.is_f64(), b.is_f64()) {
        (true, true) => a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits),
        (false, false) => a == b,
        _ => false,
    }
}

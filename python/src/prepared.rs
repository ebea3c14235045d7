//! Frames for the reference profile, prepared once per block and marking, with the Python
//! objects of what the block's documents have in common: each document makes afresh only
//! what depends on the state.

use std::sync::OnceLock;

use decision::api::frame::PreparedFrame;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::{Map, Value};

use crate::template::Template;

/// A prepared frame and the Python objects of its documents' fixed members.
pub struct Prepared {
    frame: PreparedFrame,
    block: Py<PyString>,
    questions: Template,
    dynamic: Option<Template>,
    /// The first frame artifact made, which later ones copy their equal parts from.
    artifact: OnceLock<Template>,
}

impl Prepared {
    /// Makes the Python objects of `frame`'s fixed members.
    pub fn new(py: Python<'_>, frame: PreparedFrame) -> PyResult<Prepared> {
        Ok(Prepared {
            block: PyString::new(py, frame.block()).unbind(),
            questions: Template::new(py, frame.questions().clone())?,
            dynamic: frame.dynamic().map(|dynamic| Template::new(py, dynamic.clone())).transpose()?,
            artifact: OnceLock::new(),
            frame,
        })
    }

    /// The frame itself.
    pub fn frame(&self) -> &PreparedFrame {
        &self.frame
    }

    /// [`PreparedFrame::document`] for `state`, as Python.
    pub fn document<'py>(&self, py: Python<'py>, state: &Map<String, Value>) -> PyResult<Bound<'py, PyAny>> {
        let (artifact, request) = self.frame.compile(state);
        self.to_py(py, &artifact, &request)
    }

    /// The document of [`PreparedFrame::compile`]'s parts, its members in the order
    /// [`PreparedFrame::document`] gives them (the parity tests compare the two).
    pub fn to_py<'py>(&self, py: Python<'py>, artifact: &Value, request: &str) -> PyResult<Bound<'py, PyAny>> {
        let template = match self.artifact.get() {
            Some(template) => template,
            None => {
                let made = Template::new(py, artifact.clone())?;
                self.artifact.get_or_init(|| made)
            }
        };
        let document = PyDict::new(py);
        document.set_item(intern!(py, "block"), self.block.bind(py))?;
        document.set_item(intern!(py, "frame"), template.to_py(py, artifact)?)?;
        document.set_item(intern!(py, "questions"), self.questions.copy(py)?)?;
        document.set_item(intern!(py, "requestDigest"), PyString::new(py, request))?;
        if let Some(dynamic) = &self.dynamic {
            document.set_item(intern!(py, "dynamic"), dynamic.copy(py)?)?;
        }
        Ok(document.into_any())
    }
}

//! A provider bounded by a deadline: every request it passes on carries the deadline, so no
//! exchange (and no retry) runs past it. The coding host wraps its provider in one when the
//! run has a time budget.

use std::time::Instant;

use super::error::ProviderError;
use super::{DecisionProvider, Request, Response};

/// `inner`, with every request's deadline no later than `deadline`.
pub struct WithDeadline<P> {
    inner: P,
    deadline: Instant,
}

impl<P: DecisionProvider> WithDeadline<P> {
    /// `inner`, bounded by `deadline`: a request's own earlier deadline is kept.
    pub fn new(inner: P, deadline: Instant) -> Self {
        WithDeadline { inner, deadline }
    }
}

impl<P: DecisionProvider> DecisionProvider for WithDeadline<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn decide(&self, request: &Request) -> Result<Response, ProviderError> {
        let deadline = request.deadline.map_or(self.deadline, |own| own.min(self.deadline));
        // A request shares its state and questions: the copy is a few pointers.
        let bounded = Request { deadline: Some(deadline), ..request.clone() };
        self.inner.decide(&bounded)
    }
}

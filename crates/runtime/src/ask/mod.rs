//! Questions on the wire, merged requests, answer validation and the decider.

//! The check layers (schema, policy, adapter) and the lints.

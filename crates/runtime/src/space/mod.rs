//! The indexed decision state: the candidate table, operation and target heads.

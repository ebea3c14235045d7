//! `decision-record/v1` records and their verification.

//! The export schema: its version, its columns and their Arrow types.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, TimeUnit};

/// The schema's version, written into every Parquet file's metadata (key
/// `decision.export.schema`). A column added at the end keeps the version; a column removed,
/// renamed or retyped changes it.
pub const SCHEMA_VERSION: &str = "decision-export/v1";

/// The Parquet metadata key that holds [`SCHEMA_VERSION`].
pub(crate) const SCHEMA_KEY: &str = "decision.export.schema";

/// The Arrow type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 text.
    Text,
    /// A whole number, 0 or more.
    Count,
    /// A 64-bit float.
    Number,
    /// A boolean.
    Flag,
    /// Milliseconds since the Unix epoch, UTC.
    Timestamp,
}

/// One column of the export.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// The column's name.
    pub name: &'static str,
    /// Its type.
    pub kind: ColumnType,
    /// Whether it may be null.
    pub nullable: bool,
}

const fn column(name: &'static str, kind: ColumnType, nullable: bool) -> Column {
    Column { name, kind, nullable }
}

use ColumnType::{Count, Flag, Number, Text, Timestamp};

/// The columns, in order (`docs/export.md` says what each holds and when it is null).
pub const COLUMNS: &[Column] = &[
    column("log", Text, false),
    column("run_id", Text, true),
    column("run", Count, true),
    column("line", Count, false),
    column("seq", Count, true),
    column("ts", Timestamp, true),
    column("kind", Text, false),
    column("step", Number, true),
    column("block", Text, true),
    column("position", Text, true),
    column("action", Text, true),
    column("rule", Text, true),
    column("margin", Number, true),
    column("margin_question", Text, true),
    column("answers", Text, true),
    column("frame_digest", Text, true),
    column("request_digest", Text, true),
    column("provider", Text, true),
    column("model", Text, true),
    column("latency_ms", Number, true),
    column("degraded", Flag, true),
    column("escalate", Flag, true),
    column("verdict", Text, true),
    column("approval", Text, true),
    column("approval_id", Text, true),
    column("approval_by", Text, true),
    column("floor", Text, true),
    column("host", Text, true),
    column("chain", Text, false),
    column("seal", Text, false),
    column("log_verdict", Text, false),
];

/// The Arrow schema of the export, with [`SCHEMA_VERSION`] in its metadata.
pub fn arrow_schema() -> Arc<Schema> {
    let fields: Vec<Field> = COLUMNS
        .iter()
        .map(|c| {
            let data_type = match c.kind {
                Text => DataType::Utf8,
                Count => DataType::UInt64,
                Number => DataType::Float64,
                Flag => DataType::Boolean,
                Timestamp => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            };
            Field::new(c.name, data_type, c.nullable)
        })
        .collect();
    let metadata = HashMap::from([(SCHEMA_KEY.to_owned(), SCHEMA_VERSION.to_owned())]);
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

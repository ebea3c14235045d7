//! Where rows go: Parquet (through Arrow), CSV or JSON Lines.

use std::io::Write;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, TimestampMillisecondArray, UInt64Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::error::ExportError;
use crate::row::Row;
use crate::schema::{SCHEMA_KEY, SCHEMA_VERSION, arrow_schema};

/// Rows gathered before they become one Arrow batch.
const BATCH_ROWS: usize = 8192;

/// Rows in one Parquet row group: the writer holds a row group in memory until it is full.
const ROW_GROUP_ROWS: usize = 65_536;

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Apache Parquet, Snappy-compressed, one row group per 65,536 rows.
    Parquet,
    /// CSV with a header line; a null is an empty field.
    Csv,
    /// JSON Lines: one object per row, with every column (null when empty).
    Jsonl,
}

/// A destination for rows.
pub trait RowSink {
    /// Writes one row.
    fn write(&mut self, row: Row) -> Result<(), ExportError>;
    /// Writes what is held and closes the format (the Parquet footer).
    fn finish(self: Box<Self>) -> Result<(), ExportError>;
}

/// A sink of `format` writing into `out`.
pub fn open_sink<'w, W: Write + Send + 'w>(format: Format, out: W) -> Result<Box<dyn RowSink + 'w>, ExportError> {
    Ok(match format {
        Format::Parquet => Box::new(ParquetSink::new(out)?),
        Format::Csv => Box::new(CsvSink { writer: csv::Writer::from_writer(out) }),
        Format::Jsonl => Box::new(JsonlSink { out }),
    })
}

struct ParquetSink<W: Write + Send> {
    writer: ArrowWriter<W>,
    rows: Vec<Row>,
}

impl<W: Write + Send> ParquetSink<W> {
    fn new(out: W) -> Result<Self, ExportError> {
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            // The version as a plain key too, for readers that do not decode the Arrow schema.
            .set_key_value_metadata(Some(vec![KeyValue::new(SCHEMA_KEY.to_owned(), SCHEMA_VERSION.to_owned())]))
            .build();
        let writer = ArrowWriter::try_new(out, arrow_schema(), Some(properties))?;
        Ok(ParquetSink { writer, rows: Vec::with_capacity(BATCH_ROWS) })
    }

    fn write_batch(&mut self) -> Result<(), ExportError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let batch = record_batch(&self.rows)?;
        self.writer.write(&batch)?;
        self.rows.clear();
        Ok(())
    }
}

impl<W: Write + Send> RowSink for ParquetSink<W> {
    fn write(&mut self, row: Row) -> Result<(), ExportError> {
        self.rows.push(row);
        if self.rows.len() >= BATCH_ROWS {
            self.write_batch()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), ExportError> {
        self.write_batch()?;
        self.writer.close()?;
        Ok(())
    }
}

/// The rows as one Arrow batch, columns in [`crate::COLUMNS`] order.
fn record_batch(rows: &[Row]) -> Result<RecordBatch, ExportError> {
    fn text<'r>(rows: &'r [Row], get: impl Fn(&'r Row) -> Option<&'r str>) -> ArrayRef {
        Arc::new(rows.iter().map(get).collect::<StringArray>())
    }
    fn count(rows: &[Row], get: impl Fn(&Row) -> Option<u64>) -> ArrayRef {
        Arc::new(rows.iter().map(get).collect::<UInt64Array>())
    }
    fn number(rows: &[Row], get: impl Fn(&Row) -> Option<f64>) -> ArrayRef {
        Arc::new(rows.iter().map(get).collect::<Float64Array>())
    }
    fn flag(rows: &[Row], get: impl Fn(&Row) -> Option<bool>) -> ArrayRef {
        Arc::new(rows.iter().map(get).collect::<BooleanArray>())
    }
    let ts: ArrayRef = Arc::new(rows.iter().map(|r| r.ts).collect::<TimestampMillisecondArray>().with_timezone("UTC"));
    let columns = vec![
        text(rows, |r| Some(r.log.as_str())),
        text(rows, |r| r.run_id.as_deref()),
        count(rows, |r| r.run),
        count(rows, |r| Some(r.line)),
        count(rows, |r| r.seq),
        ts,
        text(rows, |r| Some(r.kind.as_str())),
        number(rows, |r| r.step),
        text(rows, |r| r.block.as_deref()),
        text(rows, |r| r.position.as_deref()),
        text(rows, |r| r.action.as_deref()),
        text(rows, |r| r.rule.as_deref()),
        number(rows, |r| r.margin),
        text(rows, |r| r.margin_question.as_deref()),
        text(rows, |r| r.answers.as_deref()),
        text(rows, |r| r.frame_digest.as_deref()),
        text(rows, |r| r.request_digest.as_deref()),
        text(rows, |r| r.provider.as_deref()),
        text(rows, |r| r.model.as_deref()),
        number(rows, |r| r.latency_ms),
        flag(rows, |r| r.degraded),
        flag(rows, |r| r.escalate),
        text(rows, |r| r.verdict.as_deref()),
        text(rows, |r| r.approval.as_deref()),
        text(rows, |r| r.approval_id.as_deref()),
        text(rows, |r| r.approval_by.as_deref()),
        text(rows, |r| r.floor.as_deref()),
        text(rows, |r| r.host.as_deref()),
        text(rows, |r| Some(r.chain.as_str())),
        text(rows, |r| Some(r.seal.as_str())),
        text(rows, |r| Some(r.log_verdict.as_str())),
    ];
    Ok(RecordBatch::try_new(arrow_schema(), columns)?)
}

struct CsvSink<W: Write> {
    writer: csv::Writer<W>,
}

impl<W: Write> RowSink for CsvSink<W> {
    fn write(&mut self, row: Row) -> Result<(), ExportError> {
        Ok(self.writer.serialize(row)?)
    }

    fn finish(mut self: Box<Self>) -> Result<(), ExportError> {
        self.writer.flush().map_err(ExportError::Output)
    }
}

struct JsonlSink<W: Write> {
    out: W,
}

impl<W: Write> RowSink for JsonlSink<W> {
    fn write(&mut self, row: Row) -> Result<(), ExportError> {
        serde_json::to_writer(&mut self.out, &row).map_err(|e| ExportError::Output(e.into()))?;
        self.out.write_all(b"\n").map_err(ExportError::Output)
    }

    fn finish(mut self: Box<Self>) -> Result<(), ExportError> {
        self.out.flush().map_err(ExportError::Output)
    }
}

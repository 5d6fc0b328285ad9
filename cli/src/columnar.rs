//! Columnar input and output through arrow-rs: Apache Parquet files (as pyarrow, pandas, polars,
//! Spark and DuckDB write them) and Arrow IPC, both the file format (Feather v2, `.arrow`,
//! `.feather`) and the stream format (`.arrows`). Recognised by their first bytes, not their
//! names. Reading decodes each row group or record batch straight into the table's columns
//! (preallocated from the Parquet footer's row count; Parquet row groups are decoded on several
//! threads).
//!
//! Accepted column types: float64, float32, float16, signed and unsigned integers of 8–64 bits
//! and booleans, converted to f64; every value must be present (no nulls) and finite, as in a
//! CSV file. Parquet codecs: uncompressed, snappy (pyarrow's and pandas' default), zstd (polars'
//! default), lz4 and gzip; brotli and lzo are refused with a message that says how to rewrite
//! the file. Arrow IPC: uncompressed, lz4 and zstd.
//!
//! Native only: built with the `columnar` feature (part of `bin`), so neither the browser
//! bindings nor the Python wheel compile arrow-rs.

use crate::csvdata::shorten;
use crate::csvdata::Data;
use crate::messages::push_data_error;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::basic::Compression;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use tallmc_core::data::{Design, DesignPlan, Table};

/// The kinds of columnar file read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Apache Parquet (`PAR1` at both ends).
    Parquet,
    /// Arrow IPC file format, Feather v2 (`ARROW1` at both ends).
    ArrowFile,
    /// Arrow IPC stream format (messages each preceded by the 0xFFFFFFFF continuation marker).
    ArrowStream,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Parquet => "Parquet",
            Format::ArrowFile => "Arrow IPC (Feather)",
            Format::ArrowStream => "Arrow IPC stream",
        }
    }
}

/// The format of a file starting with `head` (its first 8 bytes or more), if it is columnar.
pub fn detect(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"PAR1") {
        Some(Format::Parquet)
    } else if head.starts_with(b"ARROW1") {
        Some(Format::ArrowFile)
    } else if head.len() >= 8 && head.starts_with(&[0xFF; 4]) {
        Some(Format::ArrowStream)
    } else {
        None
    }
}

/// Parquet codecs this build decodes (the `parquet` crate's codec features in Cargo.toml).
const PARQUET_CODECS: &[&str] = &["UNCOMPRESSED", "SNAPPY", "ZSTD", "LZ4", "LZ4_RAW", "GZIP"];

/// Batch size of the Parquet reader: rows decoded per step (bounded scratch memory).
const BATCH_ROWS: usize = 64 * 1024;

/// Rows per Parquet row group and per Arrow record batch when writing.
pub const WRITE_ROWS: usize = 1 << 20;

/// One error line: no line breaks from library messages.
fn one_line(s: impl std::fmt::Display) -> String {
    s.to_string().replace(['\n', '\r'], " ")
}

/// The table in the columnar file at `path`; errors name `source` (the file as the user gave
/// it) and, where it applies, the column and the 1-based row.
pub fn read_columnar(path: &Path, format: Format, source: &str) -> Result<Table, String> {
    match read_columnar_data(path, format, source, &|_| None)? {
        Data::Table(t) => Ok(t),
        // Not reached without a plan; the design's columns would not be the file's.
        Data::Design { .. } => Err(format!("{source}: read as a design")),
    }
}

/// [`read_columnar`], or for a Parquet file the design that `plan` lays out when it gives one
/// for the file's column names (`tallmc run` passes `DesignSpec::plan` for a regression model):
/// each row group is then decoded straight into the design's rows (the design
/// `Design::from_table` makes from the table, without standardising), without the table's
/// columns. The same checks of every value of every column, so the same errors. Arrow IPC
/// files give their table.
pub fn read_columnar_data(
    path: &Path,
    format: Format,
    source: &str,
    plan: &dyn Fn(&[String]) -> Option<DesignPlan>,
) -> Result<Data, String> {
    let err = |m: String| format!("{source}: {m}");
    // arrow-rs asserts some invariants of a file's metadata instead of returning an error (a
    // negative column offset, say): a damaged file must still give one line and exit code 2,
    // so a panic while reading is caught, with the default hook's report silenced meanwhile.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match format {
        Format::Parquet => read_parquet(path, plan),
        Format::ArrowFile | Format::ArrowStream => read_ipc(path, format).map(Read::Columns),
    }));
    std::panic::set_hook(hook);
    let read = read
        .unwrap_or_else(|p| {
            let m = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the reader failed".into());
            Err(ReadError::Damaged(m))
        })
        .map_err(|e| err(e.message(format)))?;
    match read {
        Read::Columns((names, columns)) => {
            if names.is_empty() {
                return Err(err("the file holds no columns".into()));
            }
            if columns[0].is_empty() {
                return Err(err("the table has no rows".into()));
            }
            Table::new(names, columns)
                .map(Data::Table)
                .map_err(|e| err(e.to_string()))
        }
        Read::Design(names, design) => {
            // A plan names at least one column.
            if design.n == 0 {
                return Err(err("the table has no rows".into()));
            }
            Ok(Data::Design { names, design })
        }
    }
}

/// What a reader read: the file's columns, or a design's rows.
enum Read {
    Columns(Columns),
    Design(Vec<String>, Design),
}

/// A design's layout over a file's columns ([`DesignPlan::places`]: per column, its slot in a
/// row of x (< d), d for the response, `UNREAD` for a column the design does not read; those
/// columns' values are checked all the same).
struct Layout {
    place: Vec<usize>,
    d: usize,
    intercept: bool,
}

impl Layout {
    /// The layout of `plan` over a file of `ncol` columns (`None` when it does not fit).
    fn of(plan: &DesignPlan, ncol: usize) -> Option<Self> {
        Some(Layout {
            place: plan.places(ncol)?,
            d: plan.names.len(),
            intercept: plan.intercept,
        })
    }
}

/// Where a row group's rows go: one slice per column, or a design's rows of x and y.
enum Dst<'a> {
    Columns(Vec<&'a mut [f64]>),
    Rows { x: &'a mut [f64], y: &'a mut [f64] },
}

impl Dst<'_> {
    fn rows(&self, d: usize) -> usize {
        match self {
            Dst::Columns(c) => c.first().map_or(0, |c| c.len()),
            Dst::Rows { x, .. } => x.len() / d.max(1),
        }
    }
}

/// Copy `batch` into the design's rows `x` (k × d) and `y` (k), through `tmp` one column at a
/// time: every column checked as [`fill_batch`] checks it, in the same order.
fn fill_rows(
    batch: &RecordBatch,
    names: &[String],
    layout: &Layout,
    (x, y): (&mut [f64], &mut [f64]),
    first_row: usize,
    tmp: &mut Vec<f64>,
) -> Result<(), ReadError> {
    if batch.num_columns() != names.len() {
        return Err(ReadError::Damaged(format!(
            "a batch has {} columns where the schema has {}",
            batch.num_columns(),
            names.len()
        )));
    }
    let (k, d) = (batch.num_rows(), layout.d);
    tmp.resize(k, 0.0);
    let tmp = &mut tmp[..k];
    for ((a, name), &slot) in batch.columns().iter().zip(names).zip(&layout.place) {
        fill(a.as_ref(), tmp, name, first_row)?;
        if slot < d {
            for (row, &v) in x.chunks_exact_mut(d).zip(tmp.iter()) {
                row[slot] = v;
            }
        } else if slot == d {
            y.copy_from_slice(tmp);
        }
    }
    if layout.intercept {
        x.chunks_exact_mut(d).for_each(|row| row[0] = 1.0);
    }
    Ok(())
}

/// What went wrong reading a columnar file (before the file's name is put in front).
enum ReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The library refused the file: damaged, truncated or not what its magic says.
    Damaged(String),
    /// A codec not compiled in.
    Codec(String),
    /// A column, and the 1-based row where it applies: message.
    Data {
        row: Option<usize>,
        column: String,
        msg: String,
    },
    /// Anything else about the table (duplicate names...).
    Other(String),
}

impl ReadError {
    fn message(&self, format: Format) -> String {
        match self {
            ReadError::Io(e) => format!("cannot read the file: {}", one_line(e)),
            ReadError::Damaged(m) => {
                format!(
                    "damaged or truncated {} file ({})",
                    format.name(),
                    one_line(m)
                )
            }
            ReadError::Codec(c) => match format {
                Format::Parquet => format!(
                    "Parquet compression {c} is not supported (uncompressed, snappy, zstd, lz4 \
                     and gzip are); rewrite the file, e.g. \
                     pyarrow.parquet.write_table(t, f, compression=\"snappy\")"
                ),
                _ => format!(
                    "Arrow IPC compression {c} is not supported (uncompressed, lz4 and zstd \
                     are); rewrite the file, e.g. \
                     pyarrow.feather.write_feather(t, f, compression=\"uncompressed\")"
                ),
            },
            ReadError::Data { row, column, msg } => {
                let mut s = String::new();
                push_data_error(&mut s, *row, Some(&shorten(column)), msg, |r| {
                    format!("row {r}")
                });
                s
            }
            ReadError::Other(m) => m.clone(),
        }
    }
}

type Columns = (Vec<String>, Vec<Vec<f64>>);

/// Column names from the schema, refusing duplicates and non-numeric types up front.
fn check_schema(schema: &Schema) -> Result<Vec<String>, ReadError> {
    let mut seen = std::collections::HashSet::new();
    let mut names = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        check_type(f)?;
        if !seen.insert(f.name().as_str()) {
            return Err(ReadError::Other(format!(
                "column \"{}\" appears twice",
                shorten(f.name())
            )));
        }
        names.push(f.name().clone());
    }
    Ok(names)
}

fn check_type(f: &Field) -> Result<(), ReadError> {
    use DataType::*;
    match f.data_type() {
        Float64 | Float32 | Float16 | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32
        | UInt64 | Boolean => Ok(()),
        t => Err(ReadError::Data {
            row: None,
            column: f.name().clone(),
            msg: format!(
                "type {} is not a number type (floats, integers and booleans are)",
                shorten(&t.to_string())
            ),
        }),
    }
}

/// Convert `array` (rows `first_row..` of the file, 0-based) into `dst` (of the same length),
/// refusing nulls and non-finite values.
fn fill(array: &dyn Array, dst: &mut [f64], name: &str, first_row: usize) -> Result<(), ReadError> {
    debug_assert_eq!(array.len(), dst.len());
    let at = |i: usize, msg: String| ReadError::Data {
        row: Some(first_row + i + 1),
        column: name.to_string(),
        msg,
    };
    if array.null_count() > 0 {
        let i = (0..array.len()).find(|&i| array.is_null(i)).unwrap_or(0);
        return Err(at(i, "null (missing values are not supported)".to_string()));
    }
    macro_rules! copy {
        ($t:ty, $conv:expr) => {{
            let conv = $conv;
            for (d, v) in dst.iter_mut().zip(array.as_primitive::<$t>().values()) {
                *d = conv(*v);
            }
        }};
    }
    let mut float = true;
    match array.data_type() {
        DataType::Float64 => dst.copy_from_slice(array.as_primitive::<Float64Type>().values()),
        DataType::Float32 => copy!(Float32Type, f64::from),
        DataType::Float16 => copy!(Float16Type, f64::from),
        t => {
            float = false;
            match t {
                DataType::Int8 => copy!(Int8Type, f64::from),
                DataType::Int16 => copy!(Int16Type, f64::from),
                DataType::Int32 => copy!(Int32Type, f64::from),
                DataType::Int64 => copy!(Int64Type, |v: i64| v as f64),
                DataType::UInt8 => copy!(UInt8Type, f64::from),
                DataType::UInt16 => copy!(UInt16Type, f64::from),
                DataType::UInt32 => copy!(UInt32Type, f64::from),
                DataType::UInt64 => copy!(UInt64Type, |v: u64| v as f64),
                DataType::Boolean => {
                    for (d, v) in dst.iter_mut().zip(array.as_boolean().values().iter()) {
                        *d = f64::from(u8::from(v));
                    }
                }
                t => {
                    return Err(ReadError::Data {
                        row: None,
                        column: name.to_string(),
                        msg: format!(
                            "type {} is not a number type (floats, integers and booleans are)",
                            shorten(&t.to_string())
                        ),
                    })
                }
            }
        }
    }
    if float {
        if let Some(i) = dst.iter().position(|v| !v.is_finite()) {
            return Err(at(
                i,
                format!(
                    "{} is not a finite number (NaN and infinities are not allowed)",
                    dst[i]
                ),
            ));
        }
    }
    Ok(())
}

/// Copy `batch` into rows `at..at + batch.num_rows()` of `columns`.
fn fill_batch(
    batch: &RecordBatch,
    names: &[String],
    columns: &mut [&mut [f64]],
    first_row: usize,
) -> Result<(), ReadError> {
    if batch.num_columns() != columns.len() {
        return Err(ReadError::Damaged(format!(
            "a batch has {} columns where the schema has {}",
            batch.num_columns(),
            columns.len()
        )));
    }
    for ((a, dst), name) in batch.columns().iter().zip(columns.iter_mut()).zip(names) {
        fill(a.as_ref(), dst, name, first_row)?;
    }
    Ok(())
}

fn open(path: &Path) -> Result<File, ReadError> {
    File::open(path).map_err(ReadError::Io)
}

/// A Parquet file: the footer first (schema, codecs, row counts), then the row groups decoded
/// into disjoint slices of the preallocated columns, several row groups at once.
fn read_parquet(
    path: &Path,
    plan: &dyn Fn(&[String]) -> Option<DesignPlan>,
) -> Result<Read, ReadError> {
    let file = open(path)?;
    let meta =
        ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(parquet_error)?;
    let names = check_schema(meta.schema())?;
    let md = meta.metadata();
    let mut sizes = Vec::with_capacity(md.num_row_groups());
    for rg in md.row_groups() {
        for c in rg.columns() {
            let codec = c.compression();
            let name = codec_name(codec);
            if !PARQUET_CODECS.contains(&name.as_str()) {
                return Err(ReadError::Codec(name));
            }
        }
        let rows = usize::try_from(rg.num_rows())
            .map_err(|_| ReadError::Damaged("a negative row count".into()))?;
        sizes.push(rows);
    }
    let n = sizes
        .iter()
        .try_fold(0usize, |a, &r| a.checked_add(r))
        .ok_or_else(|| ReadError::Damaged("too many rows".into()))?;
    // A design's rows instead of the columns when the plan gives one.
    let design_plan = plan(&names);
    let layout = design_plan
        .as_ref()
        .and_then(|p| Layout::of(p, names.len()));
    let d = layout.as_ref().map_or(1, |l| l.d);
    // Zeroed pages are mapped lazily: each value is written once, by the decoder's copy.
    let (mut columns, mut x, mut y): (Vec<Vec<f64>>, Vec<f64>, Vec<f64>) = match &layout {
        None => (names.iter().map(|_| vec![0.0; n]).collect(), vec![], vec![]),
        Some(l) => {
            let size = n
                .checked_mul(l.d)
                .ok_or_else(|| ReadError::Damaged("too many rows".into()))?;
            (vec![], vec![0.0; size], vec![0.0; n])
        }
    };
    // Per row group: its first row and its rows of the columns or of the design.
    let mut jobs: Vec<(usize, usize, Dst<'_>)> = Vec::with_capacity(sizes.len());
    if layout.is_some() {
        let (mut xr, mut yr) = (x.as_mut_slice(), y.as_mut_slice());
        let mut start = 0;
        for (g, &rows) in sizes.iter().enumerate() {
            let (xa, xb) = std::mem::take(&mut xr).split_at_mut(rows * d);
            let (ya, yb) = std::mem::take(&mut yr).split_at_mut(rows);
            jobs.push((g, start, Dst::Rows { x: xa, y: ya }));
            (xr, yr) = (xb, yb);
            start += rows;
        }
    } else {
        let mut rests: Vec<&mut [f64]> = columns.iter_mut().map(|c| c.as_mut_slice()).collect();
        let mut start = 0;
        for (g, &rows) in sizes.iter().enumerate() {
            let mut mine = Vec::with_capacity(rests.len());
            for r in rests.iter_mut() {
                let (a, b) = std::mem::take(r).split_at_mut(rows);
                mine.push(a);
                *r = b;
            }
            jobs.push((g, start, Dst::Columns(mine)));
            start += rows;
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |c| c.get())
        .min(jobs.len())
        .max(1);
    let run = |jobs: Vec<(usize, usize, Dst<'_>)>| -> Result<(), (usize, ReadError)> {
        let file = open(path).map_err(|e| (0, e))?;
        let mut tmp = Vec::new();
        for (g, start, mut dst) in jobs {
            let rows = dst.rows(d);
            let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(
                file.try_clone().map_err(|e| (g, ReadError::Io(e)))?,
                meta.clone(),
            )
            .with_row_groups(vec![g])
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| (g, parquet_error(e)))?;
            let mut at = 0;
            for batch in reader {
                let batch = batch.map_err(|e| (g, parquet_error(e)))?;
                let k = batch.num_rows();
                if at + k > rows {
                    return Err((
                        g,
                        ReadError::Damaged("more rows than the footer says".into()),
                    ));
                }
                match (&mut dst, &layout) {
                    (Dst::Rows { x, y }, Some(l)) => fill_rows(
                        &batch,
                        &names,
                        l,
                        (&mut x[at * d..(at + k) * d], &mut y[at..at + k]),
                        start + at,
                        &mut tmp,
                    ),
                    (Dst::Columns(cols), _) => {
                        let mut parts: Vec<&mut [f64]> =
                            cols.iter_mut().map(|c| &mut c[at..at + k]).collect();
                        fill_batch(&batch, &names, &mut parts, start + at)
                    }
                    (Dst::Rows { .. }, None) => Err(ReadError::Other("no layout".into())),
                }
                .map_err(|e| (g, e))?;
                at += k;
            }
            if at != rows {
                return Err((
                    g,
                    ReadError::Damaged("fewer rows than the footer says".into()),
                ));
            }
        }
        Ok(())
    };
    // Row group g goes to thread g % threads; the first error in file order is reported.
    let mut shares: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
    for (k, job) in jobs.into_iter().enumerate() {
        shares[k % threads].push(job);
    }
    let results: Vec<Result<(), (usize, ReadError)>> = std::thread::scope(|s| {
        let mut shares = shares.into_iter();
        let first = shares.next().unwrap_or_default();
        let handles: Vec<_> = shares.map(|sh| s.spawn(|| run(sh))).collect();
        let mut out = vec![run(first)];
        for h in handles {
            // A reader thread's panic goes on to read_columnar's catch_unwind.
            out.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        out
    });
    if let Some((_, e)) = results
        .into_iter()
        .filter_map(Result::err)
        .min_by_key(|(g, _)| *g)
    {
        return Err(e);
    }
    Ok(match design_plan.filter(|_| layout.is_some()) {
        Some(p) => Read::Design(
            names,
            Design {
                n,
                d,
                x,
                y,
                names: p.names,
            },
        ),
        None => Read::Columns((names, columns)),
    })
}

/// A parquet error: a codec this build lacks, or a damaged file.
fn parquet_error(e: impl std::fmt::Display) -> ReadError {
    let m = e.to_string();
    match m.split("Disabled feature at compile time: ").nth(1) {
        Some(codec) => ReadError::Codec(codec.trim().to_uppercase()),
        None => ReadError::Damaged(m),
    }
}

/// The codec's name as Parquet's metadata spells it (`ZSTD`, not `ZSTD(ZstdLevel(1))`).
fn codec_name(c: Compression) -> String {
    let s = c.to_string();
    s.split('(').next().unwrap_or(&s).to_string()
}

/// An Arrow IPC file or stream: record batches appended to the columns in order.
fn read_ipc(path: &Path, format: Format) -> Result<Columns, ReadError> {
    let mut file = open(path)?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if format == Format::ArrowStream {
        // A stream cut between two messages reads as a shorter table: require the
        // end-of-stream marker that writers put last.
        use std::io::{Read, Seek, SeekFrom};
        let mut tail = [0u8; 8];
        let ok = len >= 16
            && file.seek(SeekFrom::End(-8)).is_ok()
            && file.read_exact(&mut tail).is_ok()
            && tail == [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];
        if !ok {
            return Err(ReadError::Damaged(
                "no end-of-stream marker at its end".into(),
            ));
        }
        file.seek(SeekFrom::Start(0)).map_err(ReadError::Io)?;
    }
    let damaged = |e: arrow_schema::ArrowError| ipc_error(e.to_string());
    let (schema, batches): (SchemaRef, Box<dyn Iterator<Item = Result<RecordBatch, _>>>) =
        match format {
            Format::ArrowFile => {
                let r = arrow_ipc::reader::FileReader::try_new(file, None).map_err(damaged)?;
                (r.schema(), Box::new(r))
            }
            _ => {
                let r =
                    arrow_ipc::reader::StreamReader::try_new(std::io::BufReader::new(file), None)
                        .map_err(damaged)?;
                (r.schema(), Box::new(r))
            }
        };
    let names = check_schema(&schema)?;
    // The row count is not in the footer: reserve what the file's size allows for
    // uncompressed data (the columns grow past it only for compressed files).
    let row_bytes: u64 = schema
        .fields()
        .iter()
        .map(|f| f.data_type().primitive_width().unwrap_or(1).max(1) as u64)
        .sum::<u64>()
        .max(1);
    let guess = usize::try_from(len / row_bytes).unwrap_or(0);
    let mut columns: Vec<Vec<f64>> = names.iter().map(|_| Vec::with_capacity(guess)).collect();
    let mut n = 0usize;
    for batch in batches {
        let batch = batch.map_err(damaged)?;
        let k = batch.num_rows();
        for c in columns.iter_mut() {
            c.resize(n + k, 0.0);
        }
        let mut parts: Vec<&mut [f64]> = columns.iter_mut().map(|c| &mut c[n..]).collect();
        fill_batch(&batch, &names, &mut parts, n)?;
        n += k;
    }
    for c in columns.iter_mut() {
        c.shrink_to_fit();
    }
    Ok((names, columns))
}

/// An arrow-ipc error: a codec this build lacks, or a damaged file.
fn ipc_error(m: String) -> ReadError {
    for codec in ["lz4", "zstd"] {
        if m.contains(&format!("{codec} IPC decompression requires")) {
            return ReadError::Codec(codec.to_uppercase());
        }
    }
    ReadError::Damaged(m)
}

/// The Arrow schema of `table`: one non-nullable float64 column per table column.
fn schema_of(table: &Table) -> SchemaRef {
    Arc::new(Schema::new(
        table
            .names
            .iter()
            .map(|n| Field::new(n, DataType::Float64, false))
            .collect::<Vec<_>>(),
    ))
}

/// Record batches of at most [`WRITE_ROWS`] rows (so the writer's memory stays bounded).
fn batches(table: &Table) -> impl Iterator<Item = RecordBatch> + '_ {
    let schema = schema_of(table);
    let n = table.columns.first().map_or(0, |c| c.len());
    (0..n.div_ceil(WRITE_ROWS).max(1)).map(move |b| {
        let r = b * WRITE_ROWS..((b + 1) * WRITE_ROWS).min(n);
        let cols: Vec<ArrayRef> = table
            .columns
            .iter()
            .map(|c| Arc::new(Float64Array::from(c[r.clone()].to_vec())) as ArrayRef)
            .collect();
        RecordBatch::try_new(schema.clone(), cols).expect("columns match the schema")
    })
}

fn io_err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(one_line(e))
}

/// Write `table` as Parquet: one float64 column per table column, snappy-compressed (what
/// pyarrow writes by default), row groups of [`WRITE_ROWS`] rows.
pub fn write_parquet<W: std::io::Write + Send>(w: W, table: &Table) -> std::io::Result<()> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(WRITE_ROWS))
        .build();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(w, schema_of(table), Some(props)).map_err(io_err)?;
    for b in batches(table) {
        writer.write(&b).map_err(io_err)?;
        // One row group per batch: the encoder's buffers never hold more than one.
        writer.flush().map_err(io_err)?;
    }
    writer.close().map_err(io_err)?;
    Ok(())
}

/// Write `table` as an Arrow IPC file (Feather v2), uncompressed, record batches of
/// [`WRITE_ROWS`] rows; `pyarrow.feather.read_table` reads it back.
pub fn write_arrow<W: std::io::Write>(w: W, table: &Table) -> std::io::Result<()> {
    let mut writer =
        arrow_ipc::writer::FileWriter::try_new(w, &schema_of(table)).map_err(io_err)?;
    for b in batches(table) {
        writer.write(&b).map_err(io_err)?;
    }
    writer.finish().map_err(io_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{
        BooleanArray, Float32Array, Int16Array, Int32Array, Int64Array, Int8Array, StringArray,
        UInt16Array, UInt32Array, UInt64Array, UInt8Array,
    };

    /// A scratch file, removed on drop.
    struct Tmp(std::path::PathBuf);
    impl Tmp {
        fn new(name: &str) -> Self {
            Tmp(std::env::temp_dir().join(format!("tallmc-columnar-{}-{name}", std::process::id())))
        }
    }
    impl Drop for Tmp {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn read(path: &Path) -> Result<Table, String> {
        let head = std::fs::read(path).unwrap();
        let format = detect(&head[..head.len().min(8)]).expect("a columnar file");
        read_columnar(path, format, "t")
    }

    fn table() -> Table {
        Table::new(
            vec!["y".into(), "x1".into(), "age".into()],
            vec![
                vec![0.0, 1.0, 1.0, -0.0],
                vec![-1.5, 2.25e-310, 3.0, f64::MAX],
                vec![27.0, 31.0, 45.0, f64::MIN_POSITIVE],
            ],
        )
        .unwrap()
    }

    #[test]
    fn parquet_and_arrow_round_trip_bit_for_bit() {
        let t = table();
        for (ext, format) in [("parquet", Format::Parquet), ("arrow", Format::ArrowFile)] {
            let f = Tmp::new(&format!("rt.{ext}"));
            let w = std::fs::File::create(&f.0).unwrap();
            match format {
                Format::Parquet => write_parquet(w, &t).unwrap(),
                _ => write_arrow(w, &t).unwrap(),
            }
            let back = read(&f.0).unwrap();
            assert_eq!(back.names, t.names);
            for (a, b) in back.columns.iter().zip(&t.columns) {
                let bits = |c: &[f64]| c.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(a), bits(b), "{ext}");
            }
        }
    }

    fn every_type() -> RecordBatch {
        let cols: Vec<(&str, ArrayRef)> = vec![
            ("f64", Arc::new(Float64Array::from(vec![1.5, -2.0, 0.0]))),
            (
                "f32",
                Arc::new(Float32Array::from(vec![0.1f32, -3.0, 1e30])),
            ),
            ("i8", Arc::new(Int8Array::from(vec![-128i8, 0, 127]))),
            ("i16", Arc::new(Int16Array::from(vec![-32768i16, 1, 32767]))),
            (
                "i32",
                Arc::new(Int32Array::from(vec![i32::MIN, 2, i32::MAX])),
            ),
            (
                "i64",
                Arc::new(Int64Array::from(vec![i64::MIN, 3, 1 << 53])),
            ),
            ("u8", Arc::new(UInt8Array::from(vec![0u8, 1, 255]))),
            ("u16", Arc::new(UInt16Array::from(vec![0u16, 2, 65535]))),
            ("u32", Arc::new(UInt32Array::from(vec![0u32, 3, u32::MAX]))),
            ("u64", Arc::new(UInt64Array::from(vec![0u64, 4, u64::MAX]))),
            ("b", Arc::new(BooleanArray::from(vec![true, false, true]))),
        ];
        RecordBatch::try_from_iter(cols).unwrap()
    }

    fn expected() -> Vec<Vec<f64>> {
        vec![
            vec![1.5, -2.0, 0.0],
            vec![f64::from(0.1f32), -3.0, f64::from(1e30f32)],
            vec![-128.0, 0.0, 127.0],
            vec![-32768.0, 1.0, 32767.0],
            vec![f64::from(i32::MIN), 2.0, f64::from(i32::MAX)],
            vec![i64::MIN as f64, 3.0, 9007199254740992.0],
            vec![0.0, 1.0, 255.0],
            vec![0.0, 2.0, 65535.0],
            vec![0.0, 3.0, f64::from(u32::MAX)],
            vec![0.0, 4.0, u64::MAX as f64],
            vec![1.0, 0.0, 1.0],
        ]
    }

    fn write_batches(
        path: &Path,
        format: Format,
        batches: &[RecordBatch],
        props: Option<Compression>,
    ) {
        let w = std::fs::File::create(path).unwrap();
        let schema = batches[0].schema();
        match format {
            Format::Parquet => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(props.unwrap_or(Compression::UNCOMPRESSED))
                    .build();
                let mut w = parquet::arrow::ArrowWriter::try_new(w, schema, Some(props)).unwrap();
                for b in batches {
                    w.write(b).unwrap();
                    w.flush().unwrap();
                }
                w.close().unwrap();
            }
            Format::ArrowFile => {
                let mut w = arrow_ipc::writer::FileWriter::try_new(w, &schema).unwrap();
                for b in batches {
                    w.write(b).unwrap();
                }
                w.finish().unwrap();
            }
            Format::ArrowStream => {
                let mut w = arrow_ipc::writer::StreamWriter::try_new(w, &schema).unwrap();
                for b in batches {
                    w.write(b).unwrap();
                }
                w.finish().unwrap();
            }
        }
    }

    #[test]
    fn every_numeric_type_in_every_format_and_batches_concatenate() {
        let b = every_type();
        for (ext, format) in [
            ("parquet", Format::Parquet),
            ("arrow", Format::ArrowFile),
            ("arrows", Format::ArrowStream),
        ] {
            let f = Tmp::new(&format!("types.{ext}"));
            // Three row groups / batches: the rows in order.
            write_batches(
                &f.0,
                format,
                &[b.clone(), b.slice(1, 2), b.slice(0, 1)],
                None,
            );
            let t = read(&f.0).unwrap();
            assert_eq!(t.names[0], "f64");
            for (got, want) in t.columns.iter().zip(expected()) {
                let want: Vec<f64> =
                    [want.clone(), want[1..].to_vec(), want[..1].to_vec()].concat();
                assert_eq!(got, &want, "{ext}");
            }
        }
    }

    #[test]
    fn every_compiled_parquet_codec_reads() {
        use parquet::basic::{GzipLevel, ZstdLevel};
        let b = every_type();
        for (k, c) in [
            Compression::UNCOMPRESSED,
            Compression::SNAPPY,
            Compression::ZSTD(ZstdLevel::default()),
            Compression::LZ4,
            Compression::LZ4_RAW,
            Compression::GZIP(GzipLevel::default()),
        ]
        .into_iter()
        .enumerate()
        {
            assert!(PARQUET_CODECS.contains(&codec_name(c).as_str()));
            let f = Tmp::new(&format!("codec{k}.parquet"));
            write_batches(&f.0, Format::Parquet, std::slice::from_ref(&b), Some(c));
            assert_eq!(read(&f.0).unwrap().columns, expected(), "{c}");
        }
    }

    #[test]
    fn nulls_strings_and_nan_name_the_column_and_row() {
        let f = Tmp::new("refused.parquet");
        let nulls = RecordBatch::try_from_iter(vec![(
            "x",
            Arc::new(Int32Array::from(vec![Some(1), Some(2), None])) as ArrayRef,
        )])
        .unwrap();
        // The null is in the second row group: row 3 + 2 = 5 of the file.
        write_batches(
            &f.0,
            Format::Parquet,
            &[nulls.slice(0, 2), nulls.clone()],
            None,
        );
        assert_eq!(
            read(&f.0).unwrap_err(),
            "t: row 5, column \"x\": null (missing values are not supported)"
        );
        let s = RecordBatch::try_from_iter(vec![(
            "s",
            Arc::new(StringArray::from(vec!["a"])) as ArrayRef,
        )])
        .unwrap();
        write_batches(&f.0, Format::ArrowFile, &[s], None);
        assert_eq!(
            read(&f.0).unwrap_err(),
            "t: column \"s\": type Utf8 is not a number type (floats, integers and booleans are)"
        );
        let nan = RecordBatch::try_from_iter(vec![(
            "z",
            Arc::new(Float32Array::from(vec![0.0, f32::NEG_INFINITY])) as ArrayRef,
        )])
        .unwrap();
        write_batches(&f.0, Format::ArrowStream, &[nan.clone(), nan], None);
        assert_eq!(
            read(&f.0).unwrap_err(),
            "t: row 2, column \"z\": -inf is not a finite number (NaN and infinities are not allowed)"
        );
    }

    #[test]
    fn damaged_files_are_refused_without_panic() {
        let t = table();
        for (ext, format) in [("parquet", Format::Parquet), ("arrow", Format::ArrowFile)] {
            let f = Tmp::new(&format!("good.{ext}"));
            let w = std::fs::File::create(&f.0).unwrap();
            match format {
                Format::Parquet => write_parquet(w, &t).unwrap(),
                _ => write_arrow(w, &t).unwrap(),
            }
            let buf = std::fs::read(&f.0).unwrap();
            if format == Format::ArrowFile {
                // The same batches as a stream cut after its first message but one: refused.
                let s = Tmp::new("cut.arrows");
                let b = every_type();
                write_batches(&s.0, Format::ArrowStream, &[b.clone(), b], None);
                let whole = std::fs::read(&s.0).unwrap();
                assert_eq!(read(&s.0).unwrap().columns[0].len(), 6);
                std::fs::write(&s.0, &whole[..whole.len() - 8]).unwrap();
                let e = read(&s.0).unwrap_err();
                assert!(e.contains("no end-of-stream marker"), "{e}");
            }
            let g = Tmp::new(&format!("bad.{ext}"));
            // Every truncation and many single-byte corruptions: an error or a table, never a
            // panic, and an error is one line.
            for cut in (8..buf.len()).step_by(5) {
                std::fs::write(&g.0, &buf[..cut]).unwrap();
                let e = read_columnar(&g.0, format, "t").unwrap_err();
                assert!(e.starts_with("t: ") && !e.contains('\n'), "{e}");
            }
            for at in (8..buf.len()).step_by(3) {
                let mut b = buf.clone();
                b[at] ^= 0xA5;
                std::fs::write(&g.0, &b).unwrap();
                if let Err(e) = read_columnar(&g.0, format, "t") {
                    assert!(e.starts_with("t: ") && !e.contains('\n'), "{e}");
                }
            }
        }
    }

    /// With a design plan, a Parquet file's row groups are decoded straight into the design of
    /// `Design::from_table` on its table (bit for bit); the same error for a bad value in a
    /// column the design reads or not; Arrow IPC files, and no plan, give the table.
    #[test]
    fn parquet_row_groups_go_straight_into_the_design() {
        use tallmc_core::data::DesignSpec;
        let b = every_type();
        let f = Tmp::new("design.parquet");
        write_batches(
            &f.0,
            Format::Parquet,
            &[b.clone(), b.slice(1, 2), b.slice(0, 1)],
            None,
        );
        let t = read(&f.0).unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let spec = |response: &str, features: Option<Vec<String>>, intercept| DesignSpec {
            response: response.into(),
            features,
            intercept,
            standardize: false,
        };
        for s in [
            spec("i8", None, true),
            spec("f32", Some(vec!["u64".into(), "f64".into()]), false),
        ] {
            let plan = |names: &[String]| s.plan(names).ok();
            let want = tallmc_core::data::Design::from_table(&t, &s).unwrap();
            match read_columnar_data(&f.0, Format::Parquet, "t", &plan).unwrap() {
                Data::Design { names, design } => {
                    assert_eq!(names, t.names);
                    assert_eq!((design.n, design.d), (want.n, want.d), "{s:?}");
                    assert_eq!(design.names, want.names, "{s:?}");
                    assert_eq!(bits(&design.x), bits(&want.x), "{s:?}");
                    assert_eq!(bits(&design.y), bits(&want.y), "{s:?}");
                }
                other => panic!("{s:?}: {other:?}"),
            }
        }
        let plan = |names: &[String]| spec("i8", None, true).plan(names).ok();
        let arrow = Tmp::new("design.arrow");
        write_batches(&arrow.0, Format::ArrowFile, std::slice::from_ref(&b), None);
        assert!(matches!(
            read_columnar_data(&arrow.0, Format::ArrowFile, "t", &plan),
            Ok(Data::Table(_))
        ));
        assert!(matches!(
            read_columnar_data(&f.0, Format::Parquet, "t", &|_| None),
            Ok(Data::Table(_))
        ));
        // A null in the second row group, in a column the design reads (x) or not (w).
        let nulls = |name: &str| {
            RecordBatch::try_from_iter(vec![
                (
                    "y",
                    Arc::new(Float64Array::from(vec![Some(1.0), Some(0.0), Some(1.0)])) as ArrayRef,
                ),
                (
                    name,
                    Arc::new(Int32Array::from(vec![Some(1), Some(2), None])) as ArrayRef,
                ),
                (
                    "v",
                    Arc::new(Float64Array::from(vec![Some(0.5), Some(1.5), Some(2.5)])) as ArrayRef,
                ),
            ])
            .unwrap()
        };
        let g = Tmp::new("nulls.parquet");
        for name in ["x", "w"] {
            let batch = nulls(name);
            write_batches(&g.0, Format::Parquet, &[batch.slice(0, 2), batch], None);
            // The design reads y and v, and x when the file has it.
            let features: Vec<String> = [name, "v"]
                .iter()
                .filter(|c| **c != "w")
                .map(|c| c.to_string())
                .collect();
            let plan = |names: &[String]| spec("y", Some(features.clone()), true).plan(names).ok();
            assert!(plan(&["y".into(), name.into(), "v".into()]).is_some());
            let want = read(&g.0).unwrap_err();
            assert_eq!(
                want,
                format!("t: row 5, column \"{name}\": null (missing values are not supported)")
            );
            let e = read_columnar_data(&g.0, Format::Parquet, "t", &plan).unwrap_err();
            assert_eq!(e, want, "{name}");
        }
    }
}

//! CSV in and out: a numeric table with a header row, parsed strictly so that every problem is
//! reported with the file, the line (1-based, as a text editor shows it; the header is line 1)
//! and the column name.
//!
//! Shared by the command-line tool and the browser bindings, so it uses no threads, no clocks and
//! no file system: it parses bytes and writes into any [`std::io::Write`].

use std::fmt;
use std::io::{self, Write};
use tallmc_core::data::{Design, DesignPlan, Table};

/// What is wrong with a CSV file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CsvErrorKind {
    /// The file has no header row (no bytes, or only blank lines).
    Empty,
    /// A header row but no data rows.
    NoDataRows,
    /// Every header cell is a number: the file most likely lacks its header row.
    HeaderLooksNumeric {
        /// The first header cell.
        first: String,
    },
    /// A header cell is empty.
    EmptyColumnName {
        /// 1-based column position.
        position: usize,
    },
    /// Two header cells have the same name.
    DuplicateColumn {
        /// 1-based position of the first occurrence.
        first_position: usize,
    },
    /// A data row with a different number of fields than the header.
    Ragged {
        /// Fields in the header.
        expected: usize,
        /// Fields in this row.
        got: usize,
    },
    /// An empty cell (a missing value).
    EmptyCell,
    /// A cell that does not parse as a number.
    NotANumber {
        /// The cell's text.
        value: String,
    },
    /// A cell that parses as NaN or ±infinity.
    NotFinite {
        /// The cell's text.
        value: String,
    },
    /// Bytes that are not valid UTF-8 text.
    NotUtf8,
    /// Anything else the CSV reader reports (malformed quoting, I/O).
    Malformed(String),
}

/// A CSV problem, located in the file. Displays as one line, for example
/// `data.csv: line 7, column "x2": "abc" is not a number`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvError {
    /// The file name as given by the caller.
    pub source: String,
    /// 1-based line in the file (header = line 1), when the problem is on one line.
    pub line: Option<u64>,
    /// The column's name (or, for an unnamed column, its 1-based position as text).
    pub column: Option<String>,
    /// What is wrong.
    pub kind: CsvErrorKind,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        match (&self.line, &self.column) {
            (Some(l), Some(c)) => write!(f, ": line {l}, column \"{}\"", shorten(c))?,
            (Some(l), None) => write!(f, ": line {l}")?,
            (None, Some(c)) => write!(f, ": column \"{}\"", shorten(c))?,
            (None, None) => {}
        }
        f.write_str(": ")?;
        match &self.kind {
            CsvErrorKind::Empty => {
                f.write_str("the file is empty (expected a header row naming the columns)")
            }
            CsvErrorKind::NoDataRows => f.write_str("no data rows after the header"),
            CsvErrorKind::HeaderLooksNumeric { first } => write!(
                f,
                "the header row is all numbers (first cell \"{}\"); \
                 the first line must name the columns",
                shorten(first)
            ),
            CsvErrorKind::EmptyColumnName { position } => {
                write!(f, "column {position} of the header has no name")
            }
            CsvErrorKind::DuplicateColumn { first_position } => write!(
                f,
                "duplicate column name (same as column {first_position} of the header)"
            ),
            CsvErrorKind::Ragged { expected, got } => write!(
                f,
                "{got} field{} but the header has {expected}",
                if *got == 1 { "" } else { "s" }
            ),
            CsvErrorKind::EmptyCell => f.write_str("empty cell (missing values are not supported)"),
            CsvErrorKind::NotANumber { value } => {
                write!(f, "\"{}\" is not a number", shorten(value))
            }
            CsvErrorKind::NotFinite { value } => {
                write!(
                    f,
                    "\"{}\" is not a finite number (NaN and infinities are not allowed)",
                    shorten(value)
                )
            }
            CsvErrorKind::NotUtf8 => f.write_str("not valid UTF-8 text"),
            CsvErrorKind::Malformed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CsvError {}

/// Where each data row starts in the file, so that a problem found later (by a model checking
/// its response, say) can still be reported by line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowLines {
    /// `lines[r]` is the 1-based line of data row r (0-based). Empty when every data row r sits
    /// on line r + 2 (no blank lines, no quoted line breaks), the common case.
    lines: Vec<u64>,
}

impl RowLines {
    /// The 1-based file line of 1-based data row `row` (the numbering of
    /// [`tallmc_core::Error::InvalidData`]).
    pub fn line_of_row(&self, row: usize) -> u64 {
        match row.checked_sub(1).and_then(|r| self.lines.get(r)) {
            Some(&l) => l,
            None => row as u64 + 1,
        }
    }
}

fn err(source: &str, line: Option<u64>, column: Option<String>, kind: CsvErrorKind) -> CsvError {
    CsvError {
        source: source.to_string(),
        line,
        column,
        kind,
    }
}

/// Parse a numeric CSV with a header row into a [`Table`]. `source_name` names the file in errors.
///
/// Rules: the first non-blank line names the columns (names unique and non-empty); every later
/// non-blank line has exactly one field per column, and every cell is a finite decimal number
/// (surrounding spaces and quotes are allowed, in either order: `1, "1.5"` as well as
/// `1,"1.5"`). At least one data row is required. A UTF-8 byte order mark is ignored.
pub fn parse_csv(bytes: &[u8], source_name: &str) -> Result<Table, CsvError> {
    parse_csv_located(bytes, source_name).map(|(t, _)| t)
}

/// [`parse_csv`], also returning the file line of every data row.
pub fn parse_csv_located(bytes: &[u8], source_name: &str) -> Result<(Table, RowLines), CsvError> {
    parse_with(bytes, source_name, true)
}

/// [`parse_csv_located`] by the general reader alone, without the plain-file path: the same
/// result by construction, kept for tests and fuzzing to check that it is.
pub fn parse_csv_general(bytes: &[u8], source_name: &str) -> Result<(Table, RowLines), CsvError> {
    parse_with(bytes, source_name, false)
}

fn parse_with(
    bytes: &[u8],
    source_name: &str,
    plain_path: bool,
) -> Result<(Table, RowLines), CsvError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let mut rec = csv::ByteRecord::new();
    let located = |e: csv::Error| located(source_name, e);
    let mut counter = LineCounter::new(bytes);
    let (names, header_line) = read_header(&mut rdr, &mut rec, &mut counter, source_name)?;

    // Data rows: the plain case (every row on its own line, unquoted numbers) split across
    // the cores; anything else, or any error, by the reader below (which finds the same values
    // and gives the precise message).
    let ncol = names.len();
    let body_at = header_end(bytes, rdr.position().byte() as usize);
    if plain_path && header_line == 1 && plain_header(&bytes[..body_at]) {
        let body = &bytes[body_at..];
        if let Some(columns) = fast::parse_body(body, ncol) {
            // Every value is finite: the parse refused any other.
            if let Ok(table) = Table::new_finite(names.clone(), columns) {
                return Ok((table, RowLines::default()));
            }
        }
    }
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); ncol];
    let mut lines: Vec<u64> = Vec::new();
    let mut irregular = false;
    let mut row = 0usize;
    while rdr.read_byte_record(&mut rec).map_err(located)? {
        let line = counter.line_at(&rec);
        if !irregular && line != row as u64 + 2 {
            // The first irregular row: from here on, remember every row's line. (A flag, not
            // `lines.is_empty()`: when the first data row is irregular nothing is extended, and
            // its line was lost — a blank line before the header or the first row.)
            irregular = true;
            lines.extend((0..row as u64).map(|r| r + 2));
        }
        if irregular {
            lines.push(line);
        }
        if rec.len() != ncol {
            // Name the first missing column, or nothing when there are extra fields.
            let column = names.get(rec.len()).cloned();
            return Err(err(
                source_name,
                Some(line),
                column.filter(|_| rec.len() < ncol),
                CsvErrorKind::Ragged {
                    expected: ncol,
                    got: rec.len(),
                },
            ));
        }
        for (j, cell) in rec.iter().enumerate() {
            let v = parse_cell(cell)
                .map_err(|kind| err(source_name, Some(line), Some(names[j].clone()), kind))?;
            columns[j].push(v);
        }
        row += 1;
    }
    if row == 0 {
        return Err(err(
            source_name,
            Some(header_line),
            None,
            CsvErrorKind::NoDataRows,
        ));
    }
    let table = Table::new(names, columns).map_err(|e| {
        // Unreachable in practice (every value was checked above), but never panic.
        err(
            source_name,
            None,
            None,
            CsvErrorKind::Malformed(e.to_string()),
        )
    })?;
    Ok((table, RowLines { lines }))
}

/// The header record: the names (each checked: UTF-8, non-empty, unique; not all numbers) and
/// the header's line.
fn read_header(
    rdr: &mut csv::Reader<&[u8]>,
    rec: &mut csv::ByteRecord,
    counter: &mut LineCounter<'_>,
    source_name: &str,
) -> Result<(Vec<String>, u64), CsvError> {
    if !rdr
        .read_byte_record(rec)
        .map_err(|e| located(source_name, e))?
    {
        return Err(err(source_name, None, None, CsvErrorKind::Empty));
    }
    let header_line = counter.line_at(rec);
    let mut names: Vec<String> = Vec::with_capacity(rec.len());
    // Name → first position: the duplicate check is linear in the number of columns.
    let mut seen: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(rec.len());
    for (j, cell) in rec.iter().enumerate() {
        let name = std::str::from_utf8(unquote_spaced(cell)).map_err(|_| {
            err(
                source_name,
                Some(header_line),
                Some(format!("{}", j + 1)),
                CsvErrorKind::NotUtf8,
            )
        })?;
        if name.is_empty() {
            // A lone empty line is skipped by the reader, so a one-field empty header cannot
            // occur; an empty name among others is an error.
            return Err(err(
                source_name,
                Some(header_line),
                None,
                CsvErrorKind::EmptyColumnName { position: j + 1 },
            ));
        }
        if let Some(&k) = seen.get(name) {
            return Err(err(
                source_name,
                Some(header_line),
                Some(name.to_string()),
                CsvErrorKind::DuplicateColumn {
                    first_position: k + 1,
                },
            ));
        }
        seen.insert(name, j);
        names.push(name.to_string());
    }
    if names.iter().all(|n| n.parse::<f64>().is_ok()) {
        return Err(err(
            source_name,
            Some(header_line),
            None,
            CsvErrorKind::HeaderLooksNumeric {
                first: names[0].clone(),
            },
        ));
    }
    Ok((names, header_line))
}

/// A CSV reader's error, located by its line when it has one.
fn located(source_name: &str, e: csv::Error) -> CsvError {
    let line = e.position().map(|p| p.line());
    err(
        source_name,
        line,
        None,
        CsvErrorKind::Malformed(e.to_string()),
    )
}

/// The column names of a CSV whose first line is a plain header (on line 1, one line, no
/// quotes), and the offset of the byte after it, from `head` (the file's first bytes, holding
/// at least the header line and its line break): the names [`parse_csv_located`] gives, checked
/// the same way. `None` for any other start (a blank first line, quotes, a header that is an
/// error), which the whole-file parse then handles. With [`parse_plain_body`] on the rest of
/// the file in pieces, a file can be read in blocks (`csvfile`) with the same result.
pub fn plain_names(head: &[u8], source_name: &str) -> Option<(Vec<String>, usize)> {
    let bom = if head.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let bytes = &head[bom..];
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let mut rec = csv::ByteRecord::new();
    let mut counter = LineCounter::new(bytes);
    let (names, header_line) = read_header(&mut rdr, &mut rec, &mut counter, source_name).ok()?;
    let body_at = header_end(bytes, rdr.position().byte() as usize);
    (header_line == 1 && plain_header(&bytes[..body_at])).then_some((names, bom + body_at))
}

/// The offset just after the header record, which the reader reports at `at`: past the `\n` of
/// a `\r\n` line ending too (the reader stops after the `\r`), so that a body with Windows line
/// endings starts at its first row.
fn header_end(bytes: &[u8], at: usize) -> usize {
    let at = at.min(bytes.len());
    if at > 0 && bytes[at - 1] == b'\r' && bytes.get(at) == Some(&b'\n') {
        at + 1
    } else {
        at
    }
}

/// The columns of the body of a plain CSV (the bytes after a [`plain_names`] header, or any
/// run of its whole lines) with `ncol` columns, when every line is plain (unquoted finite
/// numbers, exactly `ncol` cells, no blank line): what [`parse_csv_located`] finds for those
/// lines. `None` otherwise (the whole-file parse then decides, and names any error).
pub fn parse_plain_body(body: &[u8], ncol: usize) -> Option<Vec<Vec<f64>>> {
    fast::parse_body(body, ncol)
}

/// [`parse_plain_body`] writing the rows into `columns` (`ncol` of them, of equal lengths) from
/// row `*filled` on, and advancing `*filled` past them: true when the body is plain. Columns
/// too short for the rows are lengthened (with zeros), so columns made by `vec![0.0; rows]`
/// for an estimate of the file's rows are written in place: their pages are first touched by
/// the thread that parses those rows (fresh pages cost the kernel's clearing, about 0.17 s per
/// 240 MB on the development machine: split between the threads instead of paid by one), and no
/// other thread's rows are copied in afterwards. On false the columns hold part of the body's
/// rows and are to be dropped. Rows past `*filled` are the caller's to truncate.
pub fn parse_plain_body_into(body: &[u8], columns: &mut [Vec<f64>], filled: &mut usize) -> bool {
    fast::parse_body_into(body, columns, filled)
}

/// Zero-filled columns for `rows` rows: memory the allocator takes from the kernel already
/// cleared (nothing is written until the parser writes a row), for [`parse_plain_body_into`].
pub fn plain_columns(ncol: usize, rows: usize) -> Vec<Vec<f64>> {
    (0..ncol).map(|_| vec![0.0; rows]).collect()
}

/// What a data file was read into (`csvfile::read_csv_data`, [`crate::npy::read_numpy_data`]).
#[derive(Debug)]
pub enum Data {
    /// The file's table.
    Table(Table),
    /// The design that the plan laid out, written straight from the file's cells (the design
    /// that `Design::from_table` makes from the file's table, without standardising).
    Design {
        /// The file's column names.
        names: Vec<String>,
        /// The design.
        design: Design,
    },
}

/// A regression design written by the plain parse straight from a file's cells
/// ([`parse_plain_rows_into`]): the rows of `x` (n × d, row-major, the intercept's ones
/// first when the plan has one) and the response `y`, laid out by a [`DesignPlan`] found from
/// the file's column names. The same design as [`Design::from_table`] on the file's table
/// (without standardising), without the table's columns: no second copy of the data, and
/// no pass that turns columns into rows.
#[derive(Debug)]
pub struct DesignRows {
    plan: DesignPlan,
    /// Per file column: its slot in a row of `x` (< d), `d` for the response, `UNREAD` for a
    /// column the design does not read (its cells are still parsed: the file must be plain);
    /// [`DesignPlan::places`].
    place: Vec<usize>,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl DesignRows {
    /// Zeroed rows for `rows` rows of a file with `ncol` columns, laid out by `plan` (made for
    /// that file's names: [`DesignSpec::plan`]); `None` when the plan does not fit the file
    /// ([`DesignPlan::places`]).
    pub fn new(plan: DesignPlan, ncol: usize, rows: usize) -> Option<Self> {
        let place = plan.places(ncol)?;
        let d = plan.names.len();
        Some(DesignRows {
            plan,
            place,
            x: vec![0.0; rows.checked_mul(d)?],
            y: vec![0.0; rows],
        })
    }

    /// The design of the first `filled` rows.
    pub fn into_design(self, filled: usize) -> Design {
        let DesignRows {
            plan, mut x, mut y, ..
        } = self;
        let d = plan.names.len();
        x.truncate(filled * d);
        y.truncate(filled);
        Design {
            n: filled,
            d,
            x,
            y,
            names: plan.names,
        }
    }
}

/// [`parse_plain_body_into`] writing the rows into a design's rows instead of columns (the same
/// values, the same answer: true when the body is plain).
pub fn parse_plain_rows_into(body: &[u8], rows: &mut DesignRows, filled: &mut usize) -> bool {
    fast::parse_rows_into(body, rows, filled)
}

/// Whether the header's bytes (up to the first data row) are one line without quotes, so that
/// data row r sits on line r + 1 of the file when the body is plain (a quoted name may hold a
/// line break: found by the fuzzer comparing both paths).
fn plain_header(head: &[u8]) -> bool {
    let breaks = head
        .iter()
        .enumerate()
        .filter(|&(k, &b)| b == b'\n' || (b == b'\r' && head.get(k + 1) != Some(&b'\n')))
        .count();
    breaks == 1 && !head.contains(&b'"')
}

#[cfg(target_arch = "x86_64")]
mod cell;

/// The plain-file path of [`parse_csv_located`]: rows of unquoted numbers, one per line.
mod fast {
    /// Rows below which one thread parses the whole body.
    const MIN_BYTES_PER_THREAD: usize = 1 << 20;

    /// The columns of `body` (the bytes after the header line) when every line holds exactly
    /// `ncol` cells that parse as finite numbers (spaces and tabs around them), lines
    /// end in `\n` or `\r\n`, no line is blank and at least one row is there; `None`
    /// otherwise (and for any cell that does not parse to a finite number), so that the
    /// general reader decides.
    pub(super) fn parse_body(body: &[u8], ncol: usize) -> Option<Vec<Vec<f64>>> {
        let rows = body.len() / first_line_len(body) + 1;
        let mut columns = super::plain_columns(ncol, rows);
        let mut filled = 0;
        if !parse_body_into(body, &mut columns, &mut filled) || filled == 0 {
            return None;
        }
        columns.iter_mut().for_each(|c| c.truncate(filled));
        Some(columns)
    }

    /// The length of `part`'s first line with its line break (for capacity estimates).
    fn first_line_len(part: &[u8]) -> usize {
        memchr::memchr(b'\n', part)
            .map_or(part.len(), |p| p + 1)
            .max(1)
    }

    /// The rows of `part` if every line is a row: its line breaks, and one more for a last
    /// line without one. (A blank line counts too; the parse then refuses it.)
    fn count_rows(part: &[u8]) -> usize {
        memchr::memchr_iter(b'\n', part).count()
            + usize::from(part.last().is_some_and(|&b| b != b'\n'))
    }

    /// `body` cut into parts of whole lines for the threads there are cores for, and each
    /// part's rows (counted on the part's own thread) when there are several parts (`None` for
    /// one: it is parsed into the room there is, and counted only if that is too little);
    /// `None` when the body is empty.
    #[allow(clippy::type_complexity)]
    fn parts_of(body: &[u8]) -> Option<(Vec<&[u8]>, Option<Vec<usize>>)> {
        if body.is_empty() {
            return None;
        }
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let threads = cores.min(body.len() / MIN_BYTES_PER_THREAD).clamp(1, 16);
        // Split points just after a line break near each k/threads of the body.
        let mut cuts = vec![0];
        for k in 1..threads {
            let at = (body.len() * k / threads).max(cuts[cuts.len() - 1]);
            match memchr::memchr(b'\n', &body[at..]) {
                Some(p) if at + p + 1 < body.len() => cuts.push(at + p + 1),
                _ => break,
            }
        }
        cuts.push(body.len());
        let parts: Vec<&[u8]> = cuts.windows(2).map(|w| &body[w[0]..w[1]]).collect();
        if parts.len() == 1 {
            return Some((parts, None));
        }
        let counts = std::thread::scope(|s| {
            let handles: Vec<_> = parts[1..]
                .iter()
                .map(|&p| s.spawn(move || count_rows(p)))
                .collect();
            let first = count_rows(parts[0]);
            let mut counts = vec![first];
            counts.extend(handles.into_iter().map(|h| h.join().unwrap_or(usize::MAX)));
            counts
        });
        Some((parts, Some(counts)))
    }

    /// Parses each part into its own sink (the first on this thread, the others on threads
    /// of their own): true when every part is plain and fills its sink exactly.
    fn parse_parts<S: Sink + Send>(parts: &[&[u8]], sinks: Vec<S>) -> bool {
        if parts.len() != sinks.len() {
            return false;
        }
        let exact = |part: &[u8], sink: &mut S| {
            let rows = sink.rows();
            matches!(parse_part(part, sink), Fill::Rows(r) if r == rows)
        };
        let mut sinks = sinks.into_iter();
        let Some(mut first) = sinks.next() else {
            return false;
        };
        if parts.len() == 1 {
            return exact(parts[0], &mut first);
        }
        let exact = &exact;
        std::thread::scope(|s| {
            let handles: Vec<_> = parts[1..]
                .iter()
                .zip(sinks)
                .map(|(&p, mut sink)| s.spawn(move || exact(p, &mut sink)))
                .collect();
            let ok0 = exact(parts[0], &mut first);
            handles
                .into_iter()
                .fold(ok0, |ok, h| h.join().unwrap_or(false) && ok)
        })
    }

    /// A body of one part into the room `sink` has (the rows from `*filled` on), without
    /// counting its lines first: `Ok` with whether it was plain (`*filled` advanced past its
    /// rows), or `Err` with its row count when the room ran out (the caller makes the room and
    /// parses it again).
    fn into_room<S: Sink>(
        part: &[u8],
        mut sink: S,
        filled: &mut usize,
    ) -> Result<bool, Vec<usize>> {
        match parse_part(part, &mut sink) {
            Fill::Rows(r) => {
                *filled += r;
                Ok(true)
            }
            Fill::NotPlain => Ok(false),
            Fill::Full => Err(vec![count_rows(part)]),
        }
    }

    /// What [`parse_part`] found.
    enum Fill {
        /// Every line plain, this many rows written.
        Rows(usize),
        /// The sink had no room for another row (the lines so far plain).
        Full,
        /// A line is not plain.
        NotPlain,
    }

    /// [`super::parse_plain_body_into`]: true when every line of `body` is plain, as
    /// [`parse_body`] requires (an empty body is not). Parts of the body go to separate
    /// threads where there are cores: each counts its part's rows, then (the rows' places
    /// known) parses its part into its own rows of the columns. A body of one part is parsed
    /// into the room the columns have, and counted only when that runs out. The values do not
    /// depend on how the body is split.
    pub(super) fn parse_body_into(
        body: &[u8],
        columns: &mut [Vec<f64>],
        filled: &mut usize,
    ) -> bool {
        if columns.is_empty() {
            return false;
        }
        let Some((parts, counts)) = parts_of(body) else {
            return false;
        };
        let len = columns[0].len();
        if columns.iter().any(|c| c.len() != len) || len < *filled {
            return false;
        }
        let counts = match counts {
            Some(c) => c,
            None => {
                let columns: Vec<&mut [f64]> =
                    columns.iter_mut().map(|c| &mut c[*filled..]).collect();
                let sink = Columns {
                    columns,
                    rows: len - *filled,
                };
                match into_room(parts[0], sink, filled) {
                    Ok(done) => return done,
                    Err(counts) => counts,
                }
            }
        };
        let Some(need) = counts.iter().try_fold(*filled, |a, &c| a.checked_add(c)) else {
            return false;
        };
        if len < need {
            columns.iter_mut().for_each(|c| c.resize(need, 0.0));
        }
        // Each part's rows of every column.
        let mut pieces: Vec<Vec<&mut [f64]>> = parts.iter().map(|_| Vec::new()).collect();
        for c in columns.iter_mut() {
            let mut rest = &mut c[*filled..need];
            for (piece, &n) in pieces.iter_mut().zip(&counts) {
                let (mine, tail) = core::mem::take(&mut rest).split_at_mut(n);
                piece.push(mine);
                rest = tail;
            }
        }
        let sinks = pieces
            .into_iter()
            .zip(&counts)
            .map(|(columns, &rows)| Columns { columns, rows })
            .collect();
        let ok = parse_parts(&parts, sinks);
        if ok {
            *filled = need;
        }
        ok
    }

    /// [`super::parse_plain_rows_into`]: [`parse_body_into`] for a design's rows (each part's
    /// rows of `x` and `y` to its thread).
    pub(super) fn parse_rows_into(
        body: &[u8],
        rows: &mut super::DesignRows,
        filled: &mut usize,
    ) -> bool {
        let Some((parts, counts)) = parts_of(body) else {
            return false;
        };
        let d = rows.plan.names.len();
        let len = rows.y.len();
        if rows.x.len() != len * d || len < *filled {
            return false;
        }
        let counts = match counts {
            Some(c) => c,
            None => {
                let sink = Rows {
                    x: &mut rows.x[*filled * d..],
                    y: &mut rows.y[*filled..],
                    d,
                    place: &rows.place,
                    intercept: rows.plan.intercept,
                    rows: len - *filled,
                };
                match into_room(parts[0], sink, filled) {
                    Ok(done) => return done,
                    Err(counts) => counts,
                }
            }
        };
        let Some(need) = counts.iter().try_fold(*filled, |a, &c| a.checked_add(c)) else {
            return false;
        };
        let Some(need_x) = need.checked_mul(d) else {
            return false;
        };
        if rows.y.len() < need {
            rows.y.resize(need, 0.0);
        }
        if rows.x.len() < need_x {
            rows.x.resize(need_x, 0.0);
        }
        let (place, intercept) = (&rows.place[..], rows.plan.intercept);
        let mut x = &mut rows.x[*filled * d..need_x];
        let mut y = &mut rows.y[*filled..need];
        let mut sinks = Vec::with_capacity(parts.len());
        for &n in &counts {
            let (xs, x_rest) = core::mem::take(&mut x).split_at_mut(n * d);
            let (ys, y_rest) = core::mem::take(&mut y).split_at_mut(n);
            sinks.push(Rows {
                x: xs,
                y: ys,
                d,
                place,
                intercept,
                rows: n,
            });
            x = x_rest;
            y = y_rest;
        }
        let ok = parse_parts(&parts, sinks);
        if ok {
            *filled = need;
        }
        ok
    }

    /// Where [`parse_part`] writes a part's cells.
    trait Sink {
        /// The part's rows.
        fn rows(&self) -> usize;
        /// Cells per line.
        fn ncol(&self) -> usize;
        /// Cell `j` of row `r`: false when there is no such cell.
        fn put(&mut self, r: usize, j: usize, v: f64) -> bool;
    }

    /// One slice per column, each as long as the part's rows.
    struct Columns<'a> {
        columns: Vec<&'a mut [f64]>,
        rows: usize,
    }

    impl Sink for Columns<'_> {
        #[inline(always)]
        fn rows(&self) -> usize {
            self.rows
        }
        #[inline(always)]
        fn ncol(&self) -> usize {
            self.columns.len()
        }
        #[inline(always)]
        fn put(&mut self, r: usize, j: usize, v: f64) -> bool {
            match self.columns.get_mut(j).and_then(|c| c.get_mut(r)) {
                Some(c) => {
                    *c = v;
                    true
                }
                None => false,
            }
        }
    }

    /// A part's rows of a design: `x` (`rows` × `d`) and `y` (`rows`), and where each column
    /// goes ([`super::DesignRows`]).
    struct Rows<'a> {
        x: &'a mut [f64],
        y: &'a mut [f64],
        d: usize,
        place: &'a [usize],
        intercept: bool,
        rows: usize,
    }

    impl Sink for Rows<'_> {
        #[inline(always)]
        fn rows(&self) -> usize {
            self.rows
        }
        #[inline(always)]
        fn ncol(&self) -> usize {
            self.place.len()
        }
        #[inline(always)]
        fn put(&mut self, r: usize, j: usize, v: f64) -> bool {
            let (Some(&k), true) = (self.place.get(j), r < self.rows) else {
                return false;
            };
            let at = r * self.d;
            if k < self.d {
                match self.x.get_mut(at + k) {
                    Some(c) => *c = v,
                    None => return false,
                }
            } else if k == self.d {
                match self.y.get_mut(r) {
                    Some(c) => *c = v,
                    None => return false,
                }
            }
            if j == 0 && self.intercept {
                match self.x.get_mut(at) {
                    Some(c) => *c = 1.0,
                    None => return false,
                }
            }
            true
        }
    }

    /// Whether this processor has what [`super::cell::cell_avx2`] is compiled for.
    #[cfg(target_arch = "x86_64")]
    pub(super) fn has_avx2() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("sse4.1")
            && std::arch::is_x86_feature_detected!("ssse3")
    }

    /// Writes the rows of one part of the body (whole lines; the last may lack its line
    /// break) into `sink` from its row 0, cell by cell: the rows written when every line is
    /// plain, [`Fill::Full`] when the sink has no room for the next row, else
    /// [`Fill::NotPlain`]. Each
    /// cell is read by the AVX2 reader where the processor has it and the cell has the common
    /// shape (`super::cell`), otherwise by `fast_float2` in place (it stops at the first byte
    /// that cannot continue the number); either way it must then be followed by spaces or tabs
    /// and a comma or line break. The numbers both read and their values are those of Rust's
    /// `str::parse::<f64>` (the general reader's; `tests::fast_float_parses_like_std`,
    /// `cell::tests::avx2_cells_parse_like_std`), and `inf` and `NaN` are refused as not
    /// finite there too.
    fn parse_part<S: Sink>(part: &[u8], sink: &mut S) -> Fill {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the processor has the features `parse_part_avx2` is compiled with.
            return unsafe { parse_part_avx2(part, sink) };
        }
        parse_part_with(part, sink, |_, _| None)
    }

    /// [`parse_part`] with the AVX2 cell reader.
    ///
    /// # Safety
    /// The processor must have the features enabled here ([`has_avx2`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,lzcnt,sse4.1,ssse3")]
    unsafe fn parse_part_avx2<S: Sink>(part: &[u8], sink: &mut S) -> Fill {
        // SAFETY: this function's features are the cell reader's.
        parse_part_with(part, sink, |b, p| unsafe { super::cell::cell_avx2(b, p) })
    }

    /// [`parse_part`]'s loop; `cell` reads a number of the common shape at an index (its
    /// value and end), or declines (`None`) and `fast_float2` reads it.
    #[inline(always)]
    fn parse_part_with<S: Sink>(
        part: &[u8],
        sink: &mut S,
        cell: impl Fn(&[u8], usize) -> Option<(f64, usize)>,
    ) -> Fill {
        let ncol = sink.ncol();
        let rows = sink.rows();
        let n = part.len();
        let blank = |pos: &mut usize| {
            while *pos < n && matches!(part[*pos], b' ' | b'\t') {
                *pos += 1;
            }
        };
        let mut pos = 0;
        let mut j = 0;
        let mut r = 0;
        while pos < n {
            // The cell reader's values are finite (it declines the others).
            let (v, end) = match cell(part, pos) {
                Some(read) => read,
                None => {
                    blank(&mut pos);
                    let Ok((v, used)) = fast_float2::parse_partial::<f64, _>(&part[pos..]) else {
                        return Fill::NotPlain;
                    };
                    if !v.is_finite() {
                        return Fill::NotPlain;
                    }
                    (v, pos + used)
                }
            };
            if !sink.put(r, j, v) {
                // No room for row r (a cell of a row that fits: ragged).
                return if r >= rows && j < ncol {
                    Fill::Full
                } else {
                    Fill::NotPlain
                };
            }
            j += 1;
            pos = end;
            // A comma right after the number: the common case, one predictable branch.
            if part.get(pos) == Some(&b',') {
                pos += 1;
                continue;
            }
            blank(&mut pos);
            match part.get(pos) {
                Some(b',') => pos += 1,
                Some(b'\n') if j == ncol => {
                    j = 0;
                    r += 1;
                    pos += 1;
                }
                // \r only as part of \r\n.
                Some(b'\r') if j == ncol && part.get(pos + 1) == Some(&b'\n') => {
                    j = 0;
                    r += 1;
                    pos += 2;
                }
                None if j == ncol => {
                    j = 0;
                    r += 1;
                }
                _ => return Fill::NotPlain,
            }
        }
        // A part ends with a complete row (a final comma leaves j > 0).
        if j == 0 {
            Fill::Rows(r)
        } else {
            Fill::NotPlain
        }
    }
}

/// Line numbers from byte offsets: the reader's own line count skips blank lines.
struct LineCounter<'a> {
    bytes: &'a [u8],
    offset: usize,
    line: u64,
}

impl<'a> LineCounter<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        LineCounter {
            bytes,
            offset: 0,
            line: 1,
        }
    }

    /// The 1-based line on which `rec` starts (records come in file order).
    fn line_at(&mut self, rec: &csv::ByteRecord) -> u64 {
        let mut start = rec
            .position()
            .map_or(self.offset, |p| p.byte() as usize)
            .clamp(self.offset, self.bytes.len());
        // The reported position is where the previous record ended: skip the blank lines the
        // reader skipped.
        while matches!(self.bytes.get(start), Some(b'\n' | b'\r')) {
            start += 1;
        }
        let chunk = &self.bytes[self.offset..start];
        for (k, &b) in chunk.iter().enumerate() {
            // `\n`, `\r\n` and a lone `\r` each end one line.
            let lone_cr = b == b'\r' && self.bytes.get(self.offset + k + 1) != Some(&b'\n');
            if b == b'\n' || lone_cr {
                self.line += 1;
            }
        }
        self.offset = start;
        self.line
    }
}

fn parse_cell(cell: &[u8]) -> Result<f64, CsvErrorKind> {
    let text = std::str::from_utf8(unquote_spaced(cell)).map_err(|_| CsvErrorKind::NotUtf8)?;
    if text.is_empty() {
        return Err(CsvErrorKind::EmptyCell);
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(CsvErrorKind::NotFinite {
            value: shorten(text),
        }),
        Err(_) => Err(CsvErrorKind::NotANumber {
            value: shorten(text),
        }),
    }
}

/// A field that was quoted after leading spaces (`1, "1.5"`): RFC 4180 (and the `csv` reader)
/// only recognises a quote at the very start of a field, so the reader keeps the quotes and the
/// trim leaves `"1.5"`. Strip them (and the spaces inside) when the field holds no other quote;
/// a comma or line break inside such a field still splits it, as in any CSV reader.
fn unquote_spaced(cell: &[u8]) -> &[u8] {
    match cell {
        [b'"', inner @ .., b'"'] if !inner.contains(&b'"') => inner.trim_ascii(),
        _ => cell,
    }
}

/// Cut a long cell or name (to 40 characters and `…`, control characters escaped) so an error
/// message stays one readable line ([`tallmc_core::settings::shorten`]).
pub fn shorten(s: &str) -> String {
    tallmc_core::settings::shorten(s)
}

/// Format a float so that parsing the text gives back the same bits: the shortest round-trip
/// decimal (as Rust's `{}`), switching to exponent notation for very large or very small
/// magnitudes (`1e-7`, `1.5e300`). Non-finite values print as `NaN`, `inf`, `-inf`.
pub fn format_f64(x: f64) -> String {
    let mut s = String::new();
    push_f64(&mut s, x);
    s
}

/// [`format_f64`], appending to `out`.
pub fn push_f64(out: &mut String, x: f64) {
    use std::fmt::Write as _;
    let a = x.abs();
    // Writing into a String cannot fail.
    let _ = if x != 0.0 && x.is_finite() && !(1e-5..1e16).contains(&a) {
        write!(out, "{x:e}")
    } else {
        write!(out, "{x}")
    };
}

/// Append one CSV field to `out`, quoting it when it contains a comma, quote or line break.
pub fn push_field(out: &mut String, field: &str) {
    if field.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

/// Write a header line of (quoted as needed) names.
pub fn write_header<W: Write>(w: &mut W, names: &[&str]) -> io::Result<()> {
    let mut line = String::new();
    for (j, n) in names.iter().enumerate() {
        if j > 0 {
            line.push(',');
        }
        push_field(&mut line, n);
    }
    line.push('\n');
    w.write_all(line.as_bytes())
}

/// Write a table as CSV (header row, then one line per row), floats at full precision, so
/// that [`parse_csv`] reads back exactly the same table.
pub fn write_table<W: Write>(w: &mut W, table: &Table) -> io::Result<()> {
    let names: Vec<&str> = table.names.iter().map(|s| s.as_str()).collect();
    write_header(w, &names)?;
    let mut line = String::new();
    for i in 0..table.nrows() {
        line.clear();
        for (j, c) in table.columns.iter().enumerate() {
            if j > 0 {
                line.push(',');
            }
            push_f64(&mut line, c.get(i).copied().unwrap_or(f64::NAN));
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Xorshift64 draws from `state` (≠ 0), for the generated cases of the number tests.
    pub(super) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    use super::*;

    fn parse(s: &str) -> Result<Table, CsvError> {
        parse_csv(s.as_bytes(), "data.csv")
    }

    fn msg(s: &str) -> String {
        parse(s).unwrap_err().to_string()
    }

    #[test]
    fn parses_a_plain_file() {
        let t = parse("y,x1,x2\n1,0.5,-2\n0, 1e-3 ,\"3\"\r\n").unwrap();
        assert_eq!(t.names, ["y", "x1", "x2"]);
        assert_eq!(t.columns[0], [1.0, 0.0]);
        assert_eq!(t.columns[1], [0.5, 1e-3]);
        assert_eq!(t.columns[2], [-2.0, 3.0]);
    }

    #[test]
    fn bom_and_blank_lines_and_missing_final_newline() {
        let (t, lines) = parse_csv_located(b"\xEF\xBB\xBFa,b\n1,2\n\n3,4", "f.csv").unwrap();
        assert_eq!(t.names, ["a", "b"]);
        assert_eq!(t.columns[1], [2.0, 4.0]);
        assert_eq!(lines.line_of_row(1), 2);
        assert_eq!(lines.line_of_row(2), 4);
    }

    /// The plain-file path (split across threads above 1 MB of rows) gives the general
    /// reader's table bit for bit: a quote in the last cell sends the same text there.
    #[test]
    fn plain_files_parse_like_the_general_reader() {
        let cells = [
            "1.5",
            " -2e3",
            "\t+3 ",
            ".5",
            "5.",
            "1E-300",
            "-0",
            "123456789.123456789e-7",
            "0.1",
            "9007199254740993",
        ];
        for (rows, crlf) in [
            (7usize, false),
            (5, true),
            (150_000, false),
            (150_000, true),
        ] {
            let mut text = String::from("y,x1,x2\n");
            for r in 0..rows {
                for j in 0..3 {
                    text.push_str(cells[(r * 3 + j * 7) % cells.len()]);
                    text.push_str(if j < 2 {
                        ","
                    } else if crlf {
                        "\r\n"
                    } else {
                        "\n"
                    });
                }
            }
            let general = text.clone() + "1,2,\"3\"\n";
            let plain = text + "1,2,3\n";
            assert!(!plain[9..].contains('"'));
            let (a, la) = parse_csv_located(plain.as_bytes(), "f.csv").unwrap();
            let (b, lb) = parse_csv_located(general.as_bytes(), "f.csv").unwrap();
            assert_eq!(a.names, b.names);
            assert_eq!(la, lb);
            assert_eq!(a.nrows(), rows + 1);
            for (ca, cb) in a.columns.iter().zip(&b.columns) {
                assert!(ca.iter().zip(cb).all(|(u, v)| u.to_bits() == v.to_bits()));
            }
        }
    }

    /// Whatever the plain path cannot take (blank lines, a lone CR, `inf`, a ragged row, an
    /// empty cell) goes to the general reader, whose messages and line numbers stand.
    /// A body of one part (too small to split) goes into the room the columns or rows have,
    /// without counting its lines first; with too little room, its lines are counted, the room
    /// made, and the part parsed again: the same values either way, and a line that is not
    /// plain is refused whether the room ran out before it or not.
    #[test]
    fn one_part_fills_the_room_then_counts() {
        let line = |r: usize| format!("{r}.25,-{r}.5,{}\n", r % 2);
        let text: String = (0..1000).map(line).collect();
        let check = |cols: &[Vec<f64>], rows: usize| {
            assert!(cols.iter().all(|c| c.len() >= rows));
            let triples = cols[0].iter().zip(&cols[1]).zip(&cols[2]).take(rows);
            for (r, ((a, b), c)) in triples.enumerate() {
                let want = (r as f64 + 0.25, -(r as f64) - 0.5, (r % 2) as f64);
                assert_eq!((*a, *b, *c), want, "row {r}");
            }
        };
        for room in [0usize, 1, 10, 999, 1000, 1001, 5000] {
            let mut cols = plain_columns(3, room);
            let mut filled = 0;
            assert!(
                parse_plain_body_into(text.as_bytes(), &mut cols, &mut filled),
                "{room}"
            );
            assert_eq!(filled, 1000, "{room}");
            check(&cols, 1000);
            // Then a second body after the first.
            let more: String = (1000..1010).map(line).collect();
            assert!(parse_plain_body_into(
                more.as_bytes(),
                &mut cols,
                &mut filled
            ));
            assert_eq!(filled, 1010);
            check(&cols, 1010);
            // Design rows: y = the last column, an intercept, the other two.
            let spec = tallmc_core::data::DesignSpec {
                response: "c".into(),
                features: None,
                intercept: true,
                standardize: false,
            };
            let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
            let mut rows = DesignRows::new(spec.plan(&names).unwrap(), 3, room).unwrap();
            let mut filled = 0;
            assert!(parse_plain_rows_into(
                text.as_bytes(),
                &mut rows,
                &mut filled
            ));
            let design = rows.into_design(filled);
            assert_eq!((design.n, design.d), (1000, 3), "{room}");
            for r in 0..1000 {
                assert_eq!(design.row(r), &[1.0, r as f64 + 0.25, -(r as f64) - 0.5]);
                assert_eq!(design.y[r], (r % 2) as f64);
            }
            // A ragged line after row 500: refused, before or after the room runs out.
            let bad = text.replacen("500.25,-500.5,0\n", "500.25,-500.5\n", 1);
            assert_ne!(bad, text);
            let mut cols = plain_columns(3, room);
            let mut filled = 0;
            assert!(
                !parse_plain_body_into(bad.as_bytes(), &mut cols, &mut filled),
                "{room}"
            );
            assert_eq!(filled, 0);
            let mut rows = DesignRows::new(spec.plan(&names).unwrap(), 3, room).unwrap();
            assert!(
                !parse_plain_rows_into(bad.as_bytes(), &mut rows, &mut filled),
                "{room}"
            );
            assert_eq!(filled, 0);
        }
    }

    #[test]
    fn plain_bodies_are_written_in_place_block_after_block() {
        // Two blocks, each large enough for one part per core (1 MB each); the columns start
        // too short for the second, which lengthens them.
        let line = |r: usize| format!("{r}.25,-{r}.5,{}\n", r % 7);
        let block = |from: usize, to: usize| (from..to).map(line).collect::<String>();
        let (a, b) = (block(0, 150_000), block(150_000, 320_000));
        assert!(a.len() > 2 << 20 && b.len() > 2 << 20);
        let mut cols = plain_columns(3, 200_000);
        let mut filled = 0;
        assert!(parse_plain_body_into(a.as_bytes(), &mut cols, &mut filled));
        assert_eq!(filled, 150_000);
        assert!(parse_plain_body_into(b.as_bytes(), &mut cols, &mut filled));
        assert_eq!(filled, 320_000);
        assert!(cols.iter().all(|c| c.len() == 320_000));
        for (r, ((a, b), c)) in cols[0].iter().zip(&cols[1]).zip(&cols[2]).enumerate() {
            assert_eq!(
                (*a, *b, *c),
                (r as f64 + 0.25, -(r as f64) - 0.5, (r % 7) as f64)
            );
        }
        // A blank line, a short row or a final comma in the second half (a later part where
        // there are cores): refused.
        for bad in ["\n", "1,2\n", "1,2,3,\n"] {
            let head = block(0, 80_000);
            let text = head.clone() + bad + &block(80_000, 130_000);
            assert!(text.len() > 2 << 20 && head.len() > text.len() / 2);
            let mut cols = plain_columns(3, 10);
            let mut filled = 0;
            assert!(
                !parse_plain_body_into(text.as_bytes(), &mut cols, &mut filled),
                "{bad:?}"
            );
            assert_eq!(filled, 0);
        }
        // Columns of unequal lengths are refused rather than misaligned.
        let mut cols = vec![vec![0.0; 5], vec![0.0; 4], vec![0.0; 5]];
        let mut filled = 0;
        assert!(!parse_plain_body_into(b"1,2,3\n", &mut cols, &mut filled));
    }

    #[test]
    fn the_plain_path_leaves_every_defect_to_the_general_reader() {
        assert_eq!(
            msg("y,x\n1,2\n1,inf\n"),
            "data.csv: line 3, column \"x\": \"inf\" is not a finite number (NaN and infinities are not allowed)"
        );
        assert_eq!(
            msg("y,x\n1,2\n1\n"),
            "data.csv: line 3, column \"x\": 1 field but the header has 2"
        );
        assert_eq!(
            msg("y,x\n1,2\n1,\n"),
            "data.csv: line 3, column \"x\": empty cell (missing values are not supported)"
        );
        let (t, lines) = parse_csv_located(b"a,b\n1,2\n\n3,4\n", "f.csv").unwrap();
        assert_eq!(t.columns[0], [1.0, 3.0]);
        assert_eq!(lines.line_of_row(2), 4);
        let (t, _) = parse_csv_located(b"a,b\r1,2\r3,4\r", "f.csv").unwrap();
        assert_eq!(t.columns[1], [2.0, 4.0]);
        // A quoted name holding a line break: the first row is on line 3 (fuzzer's find).
        let (t, lines) = parse_csv_located(b"\"a\nb\",c\n1,2\n", "f.csv").unwrap();
        assert_eq!(t.names, ["a\nb", "c"]);
        assert_eq!(lines.line_of_row(1), 3);
    }

    #[test]
    fn row_lines_default_mapping() {
        let (_, lines) = parse_csv_located(b"a\n1\n2\n3\n", "f.csv").unwrap();
        assert_eq!(lines.line_of_row(3), 4);
    }

    #[test]
    fn non_numeric_cell_names_line_and_column() {
        assert_eq!(
            msg("y,x1,x2\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,abc\n"),
            "data.csv: line 7, column \"x2\": \"abc\" is not a number"
        );
    }

    #[test]
    fn line_numbers_count_blank_lines() {
        assert_eq!(
            msg("y,x\n1,2\n\n\n1,zz\n"),
            "data.csv: line 5, column \"x\": \"zz\" is not a number"
        );
    }

    #[test]
    fn line_numbers_count_quoted_line_breaks() {
        let (_, lines) = parse_csv_located(b"a,b\n\"1\n\",2\n3,4\n", "f.csv").unwrap();
        assert_eq!(lines.line_of_row(1), 2);
        assert_eq!(lines.line_of_row(2), 4);
        assert_eq!(
            msg("a,b\n\"1\n\",2\n3,zz\n"),
            "data.csv: line 4, column \"b\": \"zz\" is not a number"
        );
    }

    #[test]
    fn non_finite_cells() {
        for bad in ["NaN", "nan", "inf", "-inf", "Infinity", "1e400"] {
            let m = msg(&format!("y,x\n1,{bad}\n"));
            assert!(
                m.starts_with(&format!(
                    "data.csv: line 2, column \"x\": \"{bad}\" is not a finite"
                )),
                "{m}"
            );
        }
    }

    #[test]
    fn empty_cell() {
        assert_eq!(
            msg("y,x\n1,\n"),
            "data.csv: line 2, column \"x\": empty cell (missing values are not supported)"
        );
    }

    #[test]
    fn ragged_rows() {
        assert_eq!(
            msg("y,x1,x2\n1,2,3\n1,2\n"),
            "data.csv: line 3, column \"x2\": 2 fields but the header has 3"
        );
        assert_eq!(
            msg("y,x1\n1,2,3\n"),
            "data.csv: line 2: 3 fields but the header has 2"
        );
    }

    #[test]
    fn empty_and_header_only() {
        assert_eq!(
            msg(""),
            "data.csv: the file is empty (expected a header row naming the columns)"
        );
        assert_eq!(msg("\n\n"), msg(""));
        assert_eq!(
            msg("y,x\n"),
            "data.csv: line 1: no data rows after the header"
        );
    }

    #[test]
    fn bad_headers() {
        assert_eq!(
            msg("y,x,y\n1,2,3\n"),
            "data.csv: line 1, column \"y\": duplicate column name (same as column 1 of the header)"
        );
        assert_eq!(
            msg("y,,x\n1,2,3\n"),
            "data.csv: line 1: column 2 of the header has no name"
        );
        assert!(msg("1,2\n3,4\n").contains("the header row is all numbers"));
    }

    #[test]
    fn invalid_utf8_and_bad_quotes() {
        let e = parse_csv(b"y,x\n1,\xff\n", "d.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.csv: line 2, column \"x\": not valid UTF-8 text"
        );
    }

    /// A quote after leading spaces (`x, "1.5"`) is read like a quote at the start of the
    /// field, in names and cells; a field with a quote inside is still refused.
    #[test]
    fn spaces_before_a_quoted_cell() {
        let t = parse_csv(b"y, \"x\" ,z\n1, \"1.5\", \" 2 \"\n0,\"3\",  4\n", "d.csv").unwrap();
        assert_eq!(t.names, ["y", "x", "z"]);
        assert_eq!(t.column("x").unwrap(), [1.5, 3.0]);
        assert_eq!(t.column("z").unwrap(), [2.0, 4.0]);
        let m = msg("y,x\n1, \"1\"\"5\"\n");
        assert!(m.contains("not a number"), "{m}");
    }

    #[test]
    fn long_cells_are_shortened() {
        let long = "a".repeat(100);
        let m = msg(&format!("y\n{long}\n"));
        assert!(m.len() < 100, "{m}");
        assert!(m.contains('…'));
    }

    /// The plain path reads numbers with `fast_float2::parse_partial`, the general reader with
    /// `str::parse::<f64>`: the same strings must be numbers, with the same bits, and a string
    /// std refuses must leave bytes unread (so the cell is refused for the byte after it).
    #[test]
    fn fast_float_parses_like_std() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut cases: Vec<String> = [
            "",
            "+",
            "-",
            ".",
            "+.",
            "e5",
            ".e5",
            "1.",
            "1.e5",
            ".5",
            "+.5",
            "-.5e-3",
            "1e",
            "1e+",
            "1e-",
            "0x10",
            "1_0",
            "inf",
            "-INF",
            "+Infinity",
            "infinit",
            "nan",
            "NaN",
            "-nan",
            "1e400",
            "-1e400",
            "1e-400",
            "4.9e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "9007199254740993",
            "00001.50000",
            "1.5E+00010",
            "123456789012345678901234567890e-10",
            " 1",
            "1 ",
            "1,2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let short = b"0123456789.eE+-infatyINFATY _x";
        for _ in 0..200_000 {
            let len = (next() % 12) as usize;
            cases.push(
                (0..len)
                    .map(|_| short[(next() % short.len() as u64) as usize] as char)
                    .collect(),
            );
        }
        for k in 0..300_000u64 {
            // Long decimals (up to 40 digits, exponents to ±350) and midpoints between
            // neighbouring doubles, where rounding is hardest.
            let mut t = String::new();
            if next().is_multiple_of(2) {
                t.push('-');
            }
            let digits = 1 + (next() % 40) as usize;
            let dot = (next() % (digits as u64 + 1)) as usize;
            for i in 0..digits {
                if i == dot && i > 0 {
                    t.push('.');
                }
                t.push((b'0' + (next() % 10) as u8) as char);
            }
            if next().is_multiple_of(2) {
                t.push_str(&format!("e{}", (next() % 701) as i64 - 350));
            }
            if k % 3 == 0 {
                let x = f64::from_bits(next() >> 2);
                let y = f64::from_bits(x.to_bits() + 1);
                t = format!("{:e}", x / 2.0 + y / 2.0);
            }
            cases.push(t);
        }
        for c in &cases {
            let std = c.parse::<f64>().ok();
            let fast = fast_float2::parse_partial::<f64, _>(c.as_bytes()).ok();
            let same = match (std, fast) {
                (Some(a), Some((b, used))) => {
                    used == c.len() && (a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
                }
                (None, Some((_, used))) => used < c.len(),
                (None, None) => true,
                (Some(_), None) => false,
            };
            assert!(same, "{c:?}: std {std:?}, fast_float2 {fast:?}");
        }
    }

    #[test]
    fn format_round_trips() {
        let xs = [
            0.0,
            -0.0,
            1.0,
            0.1,
            -2.5,
            1.0 / 3.0,
            1e-7,
            123456.789,
            1e16,
            1e16 - 2.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            -1.2345678901234567e-300,
        ];
        for x in xs {
            let s = format_f64(x);
            assert_eq!(
                s.parse::<f64>().unwrap().to_bits(),
                x.to_bits(),
                "{x} -> {s}"
            );
            assert!(s.len() <= 25, "{s}");
        }
        assert_eq!(format_f64(1.0), "1");
        assert_eq!(format_f64(1e-7), "1e-7");
        assert_eq!(format_f64(f64::NAN), "NaN");
        assert_eq!(format_f64(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn write_then_parse_is_identity() {
        let t = Table::new(
            vec!["y".into(), "x,1".into(), "x\"2".into()],
            vec![
                vec![1.0, 0.0, 1.0],
                vec![0.1, 1.0 / 3.0, -1e-9],
                vec![1e300, -0.0, 2.0f64.sqrt()],
            ],
        )
        .unwrap();
        let mut buf = Vec::new();
        write_table(&mut buf, &t).unwrap();
        let back = parse_csv(&buf, "t.csv").unwrap();
        assert_eq!(back.names, t.names);
        for (a, b) in back.columns.iter().zip(&t.columns) {
            let ab: Vec<u64> = a.iter().map(|v| v.to_bits()).collect();
            let bb: Vec<u64> = b.iter().map(|v| v.to_bits()).collect();
            assert_eq!(ab, bb);
        }
    }
}

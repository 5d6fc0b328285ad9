//! A CSV file read in blocks: the plain case (a one-line header, then rows of unquoted numbers,
//! one per line) is parsed block by block, from the file mapped into memory where it can be
//! mapped ([`plain_mapped`]) or as it is read, so the file's bytes are never held whole.
//! Reading a large file into one buffer costs as much as parsing it: the buffer's pages
//! are fresh memory the kernel must map and clear (0.34–0.68 s for a 587 MB file on the
//! development machine, against 0.08 s to read it through one 8 MB buffer), and the buffer adds
//! the file's size to the peak memory. Any other file (quotes, blank lines, a bad cell, a
//! header that is an error), and any small file, is read whole and parsed by
//! [`parse_csv_located`], which then gives the table or the located error: the result is the
//! same in every case (`csvfile::tests`).

pub use crate::csvdata::Data;
use crate::csvdata::{
    parse_csv_located, parse_plain_body_into, parse_plain_rows_into, plain_columns, plain_names,
    CsvError, DesignRows, RowLines,
};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use tallmc_core::data::{DesignPlan, Table};

/// Files below this many bytes are read whole (one block would hold them anyway).
const STREAM_FROM: u64 = 32 << 20;

/// Bytes read per block.
const BLOCK: usize = 16 << 20;

/// Why a file could not be read as a table.
#[derive(Debug)]
pub enum CsvFileError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The file's contents, located (as [`parse_csv_located`] reports them).
    Csv(CsvError),
}

/// The table in the CSV file at `path` and the file line of each data row, as
/// [`parse_csv_located`] gives them for the file's bytes (`source_name` names the file in
/// errors); or the design that `plan` lays out when it gives one for the file's column names
/// (`tallmc run` passes `DesignSpec::plan` for a regression model) and the file is large and
/// plain: it is then parsed straight into the design's rows, without the table's columns (half
/// the memory, and no pass that turns columns into rows). A plan of `None` always gives the
/// table.
pub fn read_csv_data(
    path: &Path,
    source_name: &str,
    plan: &dyn Fn(&[String]) -> Option<DesignPlan>,
) -> Result<(Data, RowLines), CsvFileError> {
    read_with(path, source_name, STREAM_FROM, BLOCK, plan)
}

/// Where the plain path writes a file's rows: the table's columns, or a design's rows.
enum Out {
    Columns(Vec<Vec<f64>>),
    Rows(DesignRows),
}

impl Out {
    /// Zeroed storage for `rows` rows of a file with columns `names`.
    fn new(names: &[String], rows: usize, plan: &dyn Fn(&[String]) -> Option<DesignPlan>) -> Self {
        match plan(names).and_then(|p| DesignRows::new(p, names.len(), rows)) {
            Some(r) => Out::Rows(r),
            None => Out::Columns(plain_columns(names.len(), rows)),
        }
    }

    /// Parses `body` into rows `*filled..` (see [`parse_plain_body_into`]).
    fn parse(&mut self, body: &[u8], filled: &mut usize) -> bool {
        match self {
            Out::Columns(c) => parse_plain_body_into(body, c, filled),
            Out::Rows(r) => parse_plain_rows_into(body, r, filled),
        }
    }

    /// The first `filled` rows (`None` when there are none: the whole-file parse names the
    /// error).
    fn finish(self, names: Vec<String>, filled: usize) -> Option<Data> {
        if filled == 0 {
            return None;
        }
        match self {
            Out::Columns(mut columns) => {
                columns.iter_mut().for_each(|c| c.truncate(filled));
                // Every value is finite: the parse refused any other.
                Table::new_finite(names, columns).ok().map(Data::Table)
            }
            Out::Rows(r) => Some(Data::Design {
                names,
                design: r.into_design(filled),
            }),
        }
    }
}

fn read_with(
    path: &Path,
    source_name: &str,
    stream_from: u64,
    block: usize,
    plan: &dyn Fn(&[String]) -> Option<DesignPlan>,
) -> Result<(Data, RowLines), CsvFileError> {
    let mut file = std::fs::File::open(path).map_err(CsvFileError::Io)?;
    let len = file.metadata().map_err(CsvFileError::Io)?.len();
    let mut buf = Vec::new();
    if len >= stream_from {
        // Mapped where the system maps it (a regular file), else read in blocks.
        match plain_mapped(&file, len, source_name, block.max(1), plan) {
            Some(Some(t)) => return Ok((t, RowLines::default())),
            Some(None) => {}
            None => {
                if let Some(t) =
                    plain_in_blocks(&mut file, len, source_name, block.max(1), &mut buf, plan)
                        .map_err(CsvFileError::Io)?
                {
                    return Ok((t, RowLines::default()));
                }
            }
        }
        // Not plain: the whole file from its start.
        file.seek(SeekFrom::Start(0)).map_err(CsvFileError::Io)?;
        buf = Vec::new();
    }
    file.read_to_end(&mut buf).map_err(CsvFileError::Io)?;
    parse_csv_located(&buf, source_name)
        .map(|(t, l)| (Data::Table(t), l))
        .map_err(CsvFileError::Csv)
}

/// The plain path on the file mapped into memory (no copy of its bytes; `None` when it cannot
/// be mapped, e.g. it is not a regular file, or its length changed): the table when the file is
/// plain, parsed `block` bytes of whole lines at a time, `Some(None)` as soon as a block is not.
/// Each parsed block's pages leave the mapping (`MADV_DONTNEED`: they stay in the page cache),
/// so the run's peak memory counts about one block of the file, as when it is read.
///
/// Reading a 587 MB file through a 16 MB buffer copies every byte from the page cache on one
/// thread between the parallel parses (0.13–0.22 s on the development machine); mapping it
/// does not. A file truncated by another process while it is mapped would stop the process
/// (SIGBUS), as with every tool that maps its input (ripgrep, Polars' CSV reader).
fn plain_mapped(
    file: &std::fs::File,
    len: u64,
    source_name: &str,
    block: usize,
    plan: &dyn Fn(&[String]) -> Option<DesignPlan>,
) -> Option<Option<Data>> {
    // SAFETY: the mapping is read-only and only read while `map` lives; the bytes are those
    // of the file unless another process truncates or rewrites it meanwhile (documented above).
    let map = unsafe { memmap2::MmapOptions::new().map(file) }.ok()?;
    if map.len() as u64 != len {
        return None;
    }
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    let bytes: &[u8] = &map;
    // The pages in [from, upto) leave the mapping (memmap2 widens the range to whole pages).
    let release = |from: usize, upto: usize| {
        // SAFETY: a shared read-only file mapping: a dropped page touched again is read again
        // from the file (only the last can be: it may hold the next block's first bytes).
        #[cfg(unix)]
        let _ = unsafe {
            map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, upto - from)
        };
        #[cfg(not(unix))]
        let _ = (from, upto);
    };
    let Some(nl) = memchr::memchr(b'\n', bytes) else {
        return Some(None);
    };
    let (names, body_at) = match plain_names(&bytes[..=nl], source_name) {
        Some(h) => h,
        None => return Some(None),
    };
    // The end of the block of whole lines from `start` (the file's end at the last block).
    let block_end = |start: usize| {
        let end = start.saturating_add(block).min(bytes.len());
        if end == bytes.len() {
            return end;
        }
        match memchr::memrchr(b'\n', &bytes[start..end]) {
            Some(p) => start + p + 1,
            // A line longer than the block: up to its end.
            None => memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |p| end + p + 1),
        }
    };
    // Zeroed columns for the rows the first block's lines predict (pages never written cost no
    // memory; the parser writes each row in place).
    let first = block_end(body_at);
    let first_rows = memchr::memchr_iter(b'\n', &bytes[body_at..first])
        .count()
        .max(1);
    let body = (first - body_at).max(1);
    let rows = (first_rows as f64 * (len as f64 / body as f64) * 1.02) as usize + 1;
    let mut out = Out::new(&names, rows, plan);
    let mut filled = 0;
    let mut start = body_at;
    while start < bytes.len() {
        let end = block_end(start);
        if !out.parse(&bytes[start..end], &mut filled) {
            return Some(None);
        }
        release(start, end);
        start = end;
    }
    Some(out.finish(names, filled))
}

/// Reads into `buf` until it holds `want` bytes or the file ends (into its spare capacity,
/// without clearing it first); false at the end of the file.
fn fill(file: &mut std::fs::File, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let need = want.saturating_sub(buf.len());
    buf.reserve(need);
    let got = file.take(need as u64).read_to_end(buf)?;
    Ok(got == need)
}

/// The table when the file is plain, parsed block by block (each block's whole lines, the
/// partial last line carried to the next); `None` as soon as a block is not plain.
fn plain_in_blocks(
    file: &mut std::fs::File,
    len: u64,
    source_name: &str,
    block: usize,
    buf: &mut Vec<u8>,
    plan: &dyn Fn(&[String]) -> Option<DesignPlan>,
) -> std::io::Result<Option<Data>> {
    // The header line, however many blocks it takes.
    let mut more = fill(file, buf, block)?;
    let nl = loop {
        if let Some(nl) = buf.iter().position(|&b| b == b'\n') {
            break nl;
        }
        if !more {
            return Ok(None);
        }
        let want = buf.len() + block;
        more = fill(file, buf, want)?;
    };
    let Some((names, body_at)) = plain_names(&buf[..=nl], source_name) else {
        return Ok(None);
    };
    // Zeroed columns for the rows the first block's lines predict (pages never written cost no
    // memory; the parser writes each row in place).
    let body = buf.len().saturating_sub(body_at).max(1);
    let first_rows = buf[body_at..]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        .max(1);
    let rows = (first_rows as f64 * (len as f64 / body as f64) * 1.02) as usize + 1;
    let mut out = Out::new(&names, rows, plan);
    let mut filled = 0;
    let mut start = body_at;
    loop {
        // This block's whole lines (all that is left at the end of the file).
        let end = if more {
            buf[start..]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(start, |p| start + p + 1)
        } else {
            buf.len()
        };
        if end > start && !out.parse(&buf[start..end], &mut filled) {
            return Ok(None);
        }
        if !more {
            break;
        }
        // The partial last line to the front, then the next block after it.
        buf.copy_within(end.., 0);
        buf.truncate(buf.len() - end);
        start = 0;
        let want = buf.len() + block;
        more = fill(file, buf, want)?;
    }
    // No data rows: the whole-file parse names the error.
    Ok(out.finish(names, filled))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tallmc_core::data::{Design, DesignSpec};

    /// A file in the system's temporary directory, removed when dropped.
    struct TempFile(std::path::PathBuf);

    impl TempFile {
        fn new(bytes: &[u8]) -> Self {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let k = NEXT.fetch_add(1, Ordering::Relaxed);
            let p =
                std::env::temp_dir().join(format!("tallmc-csvfile-{}-{k}.csv", std::process::id()));
            std::fs::write(&p, bytes).unwrap();
            TempFile(p)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn bits(c: &[f64]) -> Vec<u64> {
        c.iter().map(|v| v.to_bits()).collect()
    }

    /// The same table as `whole` (names, every value's bits).
    fn same_table(got: &Table, whole: &Table, what: &str) {
        assert_eq!(got.names, whole.names, "{what}");
        assert_eq!(got.columns.len(), whole.columns.len(), "{what}");
        for (a, b) in got.columns.iter().zip(&whole.columns) {
            assert_eq!(bits(a), bits(b), "{what}: values");
        }
    }

    /// The design plans a run could pass for a file whose table is `t`: none; every column
    /// but the first as features of the first, with an intercept; the first column alone as
    /// the feature of the last, without; and a plan for a response the file does not have.
    fn specs(t: &Table) -> Vec<Option<DesignSpec>> {
        let first = t.names.first().cloned().unwrap_or_default();
        let last = t.names.last().cloned().unwrap_or_default();
        let spec = |response: &str, features: Option<Vec<String>>, intercept| {
            Some(DesignSpec {
                response: response.into(),
                features,
                intercept,
                standardize: false,
            })
        };
        vec![
            None,
            spec(&first, None, true),
            spec(&last, Some(vec![first.clone()]), false),
            spec("no such column", None, true),
        ]
    }

    /// What a read with `spec`'s plan must give for a file whose table is `whole`: the design
    /// of `Design::from_table` (bit for bit) when the read is `plain` and the plan exists,
    /// else the table.
    fn check_data(got: &Data, whole: &Table, spec: &Option<DesignSpec>, plain: bool, what: &str) {
        let plan = spec.as_ref().and_then(|s| s.plan(&whole.names).ok());
        match got {
            Data::Design { names, design } => {
                assert!(plain && plan.is_some(), "{what}: a design");
                let spec = spec.as_ref().unwrap();
                let want = Design::from_table(whole, spec).unwrap();
                assert_eq!(*names, whole.names, "{what}: names");
                assert_eq!((design.n, design.d), (want.n, want.d), "{what}: shape");
                assert_eq!(design.names, want.names, "{what}: design names");
                assert_eq!(bits(&design.x), bits(&want.x), "{what}: x");
                assert_eq!(bits(&design.y), bits(&want.y), "{what}: y");
            }
            Data::Table(t) => {
                assert!(!plain || plan.is_none(), "{what}: the table");
                same_table(t, whole, what);
            }
        }
    }

    /// The same table (names, every value's bits, row lines) or the same error as
    /// `parse_csv_located` on the file's bytes, read in blocks of every size given; with a
    /// design plan (`specs`), the design made from that table instead when the file is plain.
    /// `in_blocks`: the file is plain, so the block path itself must give the data (not the
    /// whole-file parse it falls back to).
    fn same_as_whole(bytes: &[u8], what: &str, in_blocks: bool) {
        let f = TempFile::new(bytes);
        let whole = parse_csv_located(bytes, "f.csv");
        let specs = whole.as_ref().map_or(vec![None], |(t, _)| specs(t));
        for block in [1usize, 2, 3, 5, 8, 13, 64, 1000, 1 << 20] {
            for (k, spec) in specs.iter().enumerate() {
                let plan = |names: &[String]| spec.as_ref().and_then(|s| s.plan(names).ok());
                let what = format!("{what}, block {block}, plan {k}");
                let mut file = std::fs::File::open(&f.0).unwrap();
                let mut buf = Vec::new();
                let len = bytes.len() as u64;
                let direct =
                    plain_in_blocks(&mut file, len, "f.csv", block, &mut buf, &plan).unwrap();
                assert_eq!(direct.is_some(), in_blocks, "{what}: read in blocks");
                if let (Some(d), Ok((u, _))) = (&direct, &whole) {
                    check_data(d, u, spec, true, &what);
                }
                let file = std::fs::File::open(&f.0).unwrap();
                let mapped = plain_mapped(&file, len, "f.csv", block, &plan).flatten();
                assert_eq!(mapped.is_some(), in_blocks, "{what}: mapped");
                if let (Some(d), Ok((u, _))) = (&mapped, &whole) {
                    check_data(d, u, spec, true, &format!("{what}: mapped"));
                }
                match (&whole, read_with(&f.0, "f.csv", 0, block, &plan)) {
                    (Ok((t, l)), Ok((u, m))) => {
                        assert_eq!(*l, m, "{what}: row lines");
                        check_data(&u, t, spec, in_blocks, &what);
                    }
                    (Err(e), Err(CsvFileError::Csv(g))) => {
                        assert_eq!(*e, g, "{what}: error");
                    }
                    (w, g) => panic!("{what}: {w:?} against {g:?}"),
                }
            }
        }
    }

    #[test]
    fn blocks_give_the_whole_file_parse() {
        let plain = "y,x1,x2\n1,2.5,-3\n0, 4e-3 ,\t5\n1,0.1,9007199254740993\n";
        let blocks: Vec<(String, &str)> = vec![
            (plain.into(), "plain"),
            (plain.trim_end().into(), "no final line break"),
            (plain.replace('\n', "\r\n"), "CRLF"),
            (format!("\u{feff}{plain}"), "byte order mark"),
            ("a,b\n".to_string() + &"1.25,-7\n".repeat(500), "many rows"),
        ];
        for (text, what) in &blocks {
            same_as_whole(text.as_bytes(), what, true);
        }
        let cases: Vec<(String, &str)> = vec![
            (format!("\n{plain}"), "blank first line"),
            (plain.replace("0, 4e-3", "0,\"4e-3\""), "a quoted cell"),
            (
                plain.replace("0, 4e-3 ,\t5\n", "0, 4e-3 ,\t5\n\n"),
                "a blank line",
            ),
            (plain.replace("2.5", "abc"), "not a number"),
            (plain.replace("2.5", "inf"), "not finite"),
            (plain.replace("2.5,", ""), "ragged"),
            (plain.replace("2.5", ""), "an empty cell"),
            (plain.replace("-3\n", "-3\r"), "a lone CR"),
            (format!("{plain}1,2,3\r"), "a lone CR at the end"),
            ("y,x1,x2\n".into(), "no rows"),
            ("y,x1,x1\n1,2,3\n".into(), "duplicate names"),
            ("1,2\n3,4\n".into(), "numeric header"),
            ("\"y\",x\n1,2\n".into(), "quoted header"),
            ("y,\"x\ny\"\n1,2\n".into(), "header with a line break"),
            (String::new(), "empty file"),
            ("y,x".into(), "header alone without a line break"),
        ];
        for (text, what) in &cases {
            same_as_whole(text.as_bytes(), what, false);
        }
        same_as_whole(b"y,x\n1,\xff\n", "not UTF-8", false);
    }

    #[test]
    fn a_missing_file_is_an_io_error() {
        let p = std::env::temp_dir().join("tallmc-csvfile-no-such-file.csv");
        assert!(matches!(
            read_csv_data(&p, "f.csv", &|_| None),
            Err(CsvFileError::Io(_))
        ));
    }
}

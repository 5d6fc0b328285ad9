//! Binary columnar input and output without a parser in the way: NumPy's `.npz` (an
//! uncompressed zip of named one-dimensional `.npy` arrays, as `numpy.savez` writes it: one
//! column per array, the names as column names) and `.npy` (one two-dimensional array, columns
//! named `x0`, `x1`, …). Reading costs a copy per column (10⁷ × 30 values in about a second,
//! where the same table as CSV takes tens of seconds to parse).
//!
//! Accepted element types: little-endian `f8`, `f4`, signed and unsigned integers of 1–8 bytes
//! and `b1` (booleans), converted to f64; every value must be finite, as in a CSV file. Refused
//! with a clear message: compressed members (`numpy.savez_compressed`), big-endian or other
//! types, arrays of other shapes, members of different lengths, duplicate names.

use crate::csvdata::shorten;
use crate::csvdata::Data;
use tallmc_core::data::{Design, DesignPlan, Table};

/// The magic bytes at the start of a `.npy` file.
const NPY_MAGIC: &[u8] = b"\x93NUMPY";
/// The signature of a zip local file header (the start of a `.npz` file).
const ZIP_LOCAL: &[u8] = b"PK\x03\x04";

/// Whether `bytes` look like a `.npy` or `.npz` file (by their first bytes, not the name).
pub fn is_numpy(bytes: &[u8]) -> bool {
    bytes.starts_with(NPY_MAGIC) || bytes.starts_with(ZIP_LOCAL)
}

/// The table in a `.npz` or `.npy` file; errors name the file and, where it applies, the member
/// and the row.
pub fn read_numpy(bytes: &[u8], source: &str) -> Result<Table, String> {
    let c = numpy_columns(bytes, source)?;
    table_of(&c, source)
}

/// [`read_numpy`], or the design that `plan` lays out when it gives one for the file's column
/// names (`tallmc run` passes `DesignSpec::plan` for a regression model): each value is then
/// decoded straight into the design's rows (the design `Design::from_table` makes from the
/// table, without standardising), without the table's columns. A file with an error (columns
/// of different lengths, no rows, a value that is not finite in any column) gives the error
/// [`read_numpy`] gives.
pub fn read_numpy_data(
    bytes: &[u8],
    source: &str,
    plan: &dyn Fn(&[String]) -> Option<DesignPlan>,
) -> Result<Data, String> {
    let c = numpy_columns(bytes, source)?;
    if let Some(design) = design_of(&c, plan) {
        return Ok(Data::Design {
            names: c.names,
            design,
        });
    }
    table_of(&c, source).map(Data::Table)
}

/// The columns of a `.npy` or `.npz` file, checked as arrays but not decoded: column j is
/// elements `base + i · step` (i = 0, 1, …, `rows` − 1) of `arrays[array]`.
struct Columns<'a> {
    names: Vec<String>,
    arrays: Vec<Npy<'a>>,
    /// Per column: (array, base, step, rows).
    cols: Vec<(usize, usize, usize, usize)>,
}

impl Columns<'_> {
    /// Row i of column j.
    #[inline]
    fn value(&self, j: usize, i: usize) -> f64 {
        let (a, base, step, _) = self.cols[j];
        self.arrays[a].value(base + i * step)
    }
}

/// The columns of a `.npz` or `.npy` file; errors name the file and, where it applies, the
/// member.
fn numpy_columns<'a>(bytes: &'a [u8], source: &str) -> Result<Columns<'a>, String> {
    let err = |m: String| format!("{source}: {m}");
    if bytes.starts_with(NPY_MAGIC) {
        let a = parse_npy(bytes).map_err(err)?;
        let (n, k) = match a.shape.as_slice() {
            [n, k] => (*n, *k),
            [n] => (*n, 1),
            s => {
                return Err(err(format!(
                    "a .npy table must be one- or two-dimensional, not of shape {s:?}"
                )))
            }
        };
        let fortran = a.fortran;
        let cols = (0..k)
            .map(|j| {
                if fortran {
                    (0, j * n, 1, n)
                } else {
                    (0, j, k, n)
                }
            })
            .collect();
        return Ok(Columns {
            names: (0..k).map(|j| format!("x{j}")).collect(),
            arrays: vec![a],
            cols,
        });
    }
    let members = zip_members(bytes).map_err(err)?;
    let mut c = Columns {
        names: Vec::with_capacity(members.len()),
        arrays: Vec::with_capacity(members.len()),
        cols: Vec::with_capacity(members.len()),
    };
    let mut seen = std::collections::HashSet::new();
    for (name, data) in members {
        let col = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        let a = parse_npy(data).map_err(|m| err(format!("member \"{}\": {m}", shorten(&name))))?;
        if a.shape.len() != 1 {
            return Err(err(format!(
                "member \"{}\" has shape {:?}; every member of a .npz table is one column (a one-dimensional array)",
                shorten(&name),
                a.shape
            )));
        }
        if !seen.insert(col.clone()) {
            return Err(err(format!("column \"{}\" appears twice", shorten(&col))));
        }
        c.cols.push((c.arrays.len(), 0, 1, a.shape[0]));
        c.arrays.push(a);
        c.names.push(col);
    }
    Ok(c)
}

/// The table of decoded columns; errors (no columns, different lengths, a value that is not
/// finite, no rows) name the file, the column and the row.
fn table_of(c: &Columns<'_>, source: &str) -> Result<Table, String> {
    let err = |m: String| format!("{source}: {m}");
    let names = c.names.clone();
    let columns: Vec<Vec<f64>> = (0..c.cols.len())
        .map(|j| (0..c.cols[j].3).map(|i| c.value(j, i)).collect())
        .collect();
    if names.is_empty() {
        return Err(err("the file holds no columns".into()));
    }
    let n = columns[0].len();
    for (name, c) in names.iter().zip(&columns) {
        if c.len() != n {
            return Err(err(format!(
                "column \"{}\" has {} rows, \"{}\" has {n}",
                shorten(name),
                c.len(),
                shorten(&names[0])
            )));
        }
        if let Some(i) = c.iter().position(|v| !v.is_finite()) {
            return Err(err(format!(
                "row {}, column \"{}\": {} is not a finite number (NaN and infinities are not allowed)",
                i + 1,
                shorten(name),
                c[i]
            )));
        }
    }
    if n == 0 {
        return Err(err("the table has no rows".into()));
    }
    // Every value is finite (checked above).
    Table::new_finite(names, columns).map_err(|e| err(e.to_string()))
}

/// Rows per piece of [`design_of`]'s work (a piece's rows of the design stay in cache while
/// each column is written into them).
const PIECE: usize = 8_192;

/// The design `plan` lays out for the columns, decoded straight into its rows (pieces of
/// rows on the cores there are), when the plan gives one and every column has the same
/// number of rows, at least one, all finite (the columns the design does not read too, as
/// [`table_of`] requires); `None` otherwise.
fn design_of(c: &Columns<'_>, plan: &dyn Fn(&[String]) -> Option<DesignPlan>) -> Option<Design> {
    let n = c.cols.first()?.3;
    if n == 0 || c.cols.iter().any(|col| col.3 != n) {
        return None;
    }
    let plan = plan(&c.names)?;
    let place = plan.places(c.cols.len())?;
    let d = plan.names.len();
    let off = usize::from(plan.intercept);
    let unread: Vec<usize> = (0..c.cols.len())
        .filter(|&j| place[j] == tallmc_core::data::UNREAD)
        .collect();
    let mut x = vec![0.0; n.checked_mul(d)?];
    let mut y = vec![0.0; n];
    // One piece: rows i0.. of x and y.
    let piece = |k: usize, xs: &mut [f64], ys: &mut [f64]| -> bool {
        let i0 = k * PIECE;
        let mut ok = true;
        if plan.intercept {
            xs.chunks_exact_mut(d).for_each(|r| r[0] = 1.0);
        }
        for (q, &j) in plan.features.iter().enumerate() {
            for (r, row) in xs.chunks_exact_mut(d).enumerate() {
                let v = c.value(j, i0 + r);
                ok &= v.is_finite();
                row[off + q] = v;
            }
        }
        for (r, v) in ys.iter_mut().enumerate() {
            *v = c.value(plan.response, i0 + r);
            ok &= v.is_finite();
        }
        for &j in &unread {
            for r in 0..ys.len() {
                ok &= c.value(j, i0 + r).is_finite();
            }
        }
        ok
    };
    let pieces: Vec<(&mut [f64], &mut [f64])> =
        x.chunks_mut(PIECE * d).zip(y.chunks_mut(PIECE)).collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(pieces.len());
    let ok = if threads <= 1 {
        pieces
            .into_iter()
            .enumerate()
            .fold(true, |ok, (k, (xs, ys))| piece(k, xs, ys) && ok)
    } else {
        // Piece k to thread k mod threads (each piece's pages first touched by its thread).
        let mut groups: Vec<Vec<Piece<'_>>> = (0..threads).map(|_| Vec::new()).collect();
        for (k, (xs, ys)) in pieces.into_iter().enumerate() {
            groups[k % threads].push((k, xs, ys));
        }
        let piece = &piece;
        std::thread::scope(|s| {
            let handles: Vec<_> = groups
                .into_iter()
                .map(|g| {
                    s.spawn(move || {
                        g.into_iter()
                            .fold(true, |ok, (k, xs, ys)| piece(k, xs, ys) && ok)
                    })
                })
                .collect();
            let done: Vec<bool> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or(false))
                .collect();
            done.iter().all(|&ok| ok)
        })
    };
    ok.then_some(Design {
        n,
        d,
        x,
        y,
        names: plan.names,
    })
}

/// A piece of [`design_of`]'s work: its index, its rows of x and of y.
type Piece<'a> = (usize, &'a mut [f64], &'a mut [f64]);

/// One parsed `.npy` array: its shape, order and raw little-endian elements.
struct Npy<'a> {
    shape: Vec<usize>,
    fortran: bool,
    kind: Kind,
    data: &'a [u8],
}

#[derive(Clone, Copy)]
enum Kind {
    F(usize),
    I(usize),
    U(usize),
    Bool,
}

impl Npy<'_> {
    /// Element `at` (in storage order) as f64.
    #[inline]
    fn value(&self, at: usize) -> f64 {
        let le = |w: usize| {
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(&self.data[at * w..at * w + w]);
            u64::from_le_bytes(b)
        };
        match self.kind {
            Kind::F(8) => f64::from_bits(le(8)),
            Kind::F(_) => f64::from(f32::from_bits(le(4) as u32)),
            Kind::I(w) => {
                let shift = 64 - 8 * w as u32;
                (((le(w) << shift) as i64) >> shift) as f64
            }
            Kind::U(w) => le(w) as f64,
            Kind::Bool => f64::from(u8::from(self.data[at] != 0)),
        }
    }
}

/// Parse a `.npy` header and check that its data are all there.
fn parse_npy(bytes: &[u8]) -> Result<Npy<'_>, String> {
    let rest = bytes
        .strip_prefix(NPY_MAGIC)
        .ok_or("not a .npy array (no \\x93NUMPY magic)")?;
    let (major, rest) = rest.split_first().ok_or("truncated .npy header")?;
    let rest = rest.get(1..).ok_or("truncated .npy header")?;
    let (len, rest) = match major {
        1 => (
            usize::from(u16::from_le_bytes([
                *rest.first().ok_or("truncated .npy header")?,
                *rest.get(1).ok_or("truncated .npy header")?,
            ])),
            rest.get(2..).ok_or("truncated .npy header")?,
        ),
        2 | 3 => {
            let b: [u8; 4] = rest
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .ok_or("truncated .npy header")?;
            (u32::from_le_bytes(b) as usize, &rest[4..])
        }
        v => return Err(format!(".npy format version {v} is not supported")),
    };
    let header = rest.get(..len).ok_or("truncated .npy header")?;
    let data = &rest[len..];
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let field = |key: &str| -> Result<&str, String> {
        let at = header
            .find(&format!("'{key}'"))
            .ok_or(format!("the .npy header has no '{key}'"))?;
        let after = header[at + key.len() + 2..].trim_start();
        Ok(after.strip_prefix(':').unwrap_or(after).trim_start())
    };
    let descr = field("descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.split('\'').next())
        .ok_or("the .npy header's descr is not a simple type")?;
    let (order, code) = (descr.get(..1).unwrap_or(""), descr.get(1..).unwrap_or(""));
    let width: usize = code.get(1..).and_then(|w| w.parse().ok()).unwrap_or(0);
    let kind = match (code.chars().next(), width) {
        (Some('f'), 8) => Kind::F(8),
        (Some('f'), 4) => Kind::F(4),
        (Some('i'), 1 | 2 | 4 | 8) => Kind::I(width),
        (Some('u'), 1 | 2 | 4 | 8) => Kind::U(width),
        (Some('b'), 1) => Kind::Bool,
        _ => {
            return Err(format!(
                "element type '{}' is not supported (floats, integers and booleans are)",
                shorten(descr)
            ))
        }
    };
    if order == ">" && width > 1 {
        return Err(format!(
            "element type '{descr}' is big-endian; save it little-endian (numpy's default)"
        ));
    }
    let fortran = field("fortran_order")?.starts_with("True");
    let shape_text = field("shape")?;
    let shape_text = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or("the .npy header's shape is not a tuple")?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("bad .npy shape ({shape_text})"))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    let count = shape
        .iter()
        .try_fold(1usize, |a, &s| a.checked_mul(s))
        .ok_or("the .npy shape is too large")?;
    let need = count
        .checked_mul(width)
        .ok_or("the .npy shape is too large")?;
    if data.len() < need {
        return Err(format!(
            "truncated .npy data: {} bytes where shape {shape:?} needs {need}",
            data.len()
        ));
    }
    Ok(Npy {
        shape,
        fortran,
        kind,
        data: &data[..need],
    })
}

fn u16_at(b: &[u8], at: usize) -> Result<usize, String> {
    b.get(at..at + 2)
        .map(|s| usize::from(u16::from_le_bytes([s[0], s[1]])))
        .ok_or_else(|| "truncated zip structure".to_string())
}

fn u32_at(b: &[u8], at: usize) -> Result<u64, String> {
    b.get(at..at + 4)
        .map(|s| u64::from(u32::from_le_bytes([s[0], s[1], s[2], s[3]])))
        .ok_or_else(|| "truncated zip structure".to_string())
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, String> {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| "truncated zip structure".to_string())
}

/// The members of a zip archive in directory order, as (name, stored bytes); compressed
/// members are refused. Reads the central directory (zip64 sizes and offsets included).
fn zip_members(b: &[u8]) -> Result<Vec<(String, &[u8])>, String> {
    // End of central directory: the last "PK\x05\x06" within the last 64 kB + 22 bytes.
    let tail = b.len().saturating_sub(65_557);
    let eocd = (tail..b.len().saturating_sub(21))
        .rev()
        .find(|&i| b[i..].starts_with(b"PK\x05\x06"))
        .ok_or("not a .npz file (no zip directory at its end)")?;
    let mut entries = u16_at(b, eocd + 10)? as u64;
    let mut dir = u32_at(b, eocd + 16)?;
    // Zip64: the locator just before the end record points at the zip64 end record.
    if eocd >= 20 && b[eocd - 20..].starts_with(b"PK\x06\x07") {
        let rec = usize::try_from(u64_at(b, eocd - 12)?).map_err(|_| "bad zip64 record")?;
        if !b.get(rec..).is_some_and(|r| r.starts_with(b"PK\x06\x06")) {
            return Err("bad zip64 end record".into());
        }
        entries = u64_at(b, rec + 32)?;
        dir = u64_at(b, rec + 48)?;
    }
    let mut at = usize::try_from(dir).map_err(|_| "bad zip directory offset")?;
    let mut out = Vec::new();
    for _ in 0..entries {
        if !b.get(at..).is_some_and(|r| r.starts_with(b"PK\x01\x02")) {
            return Err("damaged zip directory".into());
        }
        let method = u16_at(b, at + 10)?;
        let mut size = u32_at(b, at + 20)?;
        let name_len = u16_at(b, at + 28)?;
        let extra_len = u16_at(b, at + 30)?;
        let comment_len = u16_at(b, at + 32)?;
        let mut local = u32_at(b, at + 42)?;
        let name = b
            .get(at + 46..at + 46 + name_len)
            .ok_or("truncated zip directory")?;
        let name = String::from_utf8_lossy(name).into_owned();
        // Zip64 extra field: the 64-bit values of the fields that read 0xFFFFFFFF, in order.
        let extra = b
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or("truncated zip directory")?;
        let mut e = 0;
        while e + 4 <= extra.len() {
            let (id, len) = (u16_at(extra, e)?, u16_at(extra, e + 2)?);
            if id == 1 {
                let mut f = e + 4;
                if u32_at(b, at + 24)? == 0xFFFF_FFFF {
                    f += 8; // uncompressed size
                }
                if size == 0xFFFF_FFFF {
                    size = u64_at(extra, f)?;
                    f += 8;
                }
                if local == 0xFFFF_FFFF {
                    local = u64_at(extra, f)?;
                }
            }
            e += 4 + len;
        }
        if method != 0 {
            return Err(format!(
                "member \"{}\" is compressed (numpy.savez_compressed); save the table with numpy.savez",
                shorten(&name)
            ));
        }
        let l = usize::try_from(local).map_err(|_| "bad zip member offset")?;
        if !b.get(l..).is_some_and(|r| r.starts_with(ZIP_LOCAL)) {
            return Err(format!("damaged zip member \"{}\"", shorten(&name)));
        }
        let start = l + 30 + u16_at(b, l + 26)? + u16_at(b, l + 28)?;
        let size = usize::try_from(size).map_err(|_| "bad zip member size")?;
        let data = start
            .checked_add(size)
            .and_then(|end| b.get(start..end))
            .ok_or_else(|| format!("truncated zip member \"{}\"", shorten(&name)))?;
        out.push((name, data));
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

/// CRC-32 (IEEE), as zip members carry it.
fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *t = c;
    }
    let mut c = !0u32;
    for &x in data {
        c = table[((c ^ u32::from(x)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

/// One column as a `.npy` file of little-endian f64.
fn npy_bytes(col: &[f64]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({},), }}",
        col.len()
    );
    // Pad so that the data start on a multiple of 64 bytes (magic 6 + version 2 + length 2).
    let total = (10 + header.len() + 1).div_ceil(64) * 64;
    while 10 + header.len() + 1 < total {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + 8 * col.len());
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in col {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Write `table` as a `.npz` file (`numpy.savez`'s layout: one uncompressed `NAME.npy` member
/// of little-endian f64 per column, zip64 records throughout, so any size is fine);
/// `numpy.load` reads it back.
pub fn write_npz<W: std::io::Write>(w: &mut W, table: &Table) -> std::io::Result<()> {
    let mut offset = 0u64;
    let mut dir = Vec::new();
    for (name, col) in table.names.iter().zip(&table.columns) {
        let member = npy_bytes(col);
        let fname = format!("{name}.npy");
        let crc = crc32(&member);
        let size = member.len() as u64;
        // Local header with a zip64 extra field (sizes).
        let mut local = Vec::new();
        local.extend_from_slice(ZIP_LOCAL);
        local.extend_from_slice(&45u16.to_le_bytes()); // version needed (zip64)
        local.extend_from_slice(&0u16.to_le_bytes()); // flags
        local.extend_from_slice(&0u16.to_le_bytes()); // stored
        local.extend_from_slice(&0u32.to_le_bytes()); // time, date
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        local.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        local.extend_from_slice(&(fname.len() as u16).to_le_bytes());
        local.extend_from_slice(&20u16.to_le_bytes());
        local.extend_from_slice(fname.as_bytes());
        local.extend_from_slice(&1u16.to_le_bytes());
        local.extend_from_slice(&16u16.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        w.write_all(&local)?;
        w.write_all(&member)?;
        // Central directory entry with zip64 sizes and offset.
        dir.extend_from_slice(b"PK\x01\x02");
        dir.extend_from_slice(&45u16.to_le_bytes()); // made by
        dir.extend_from_slice(&45u16.to_le_bytes()); // needed
        dir.extend_from_slice(&0u16.to_le_bytes());
        dir.extend_from_slice(&0u16.to_le_bytes());
        dir.extend_from_slice(&0u32.to_le_bytes());
        dir.extend_from_slice(&crc.to_le_bytes());
        dir.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        dir.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        dir.extend_from_slice(&(fname.len() as u16).to_le_bytes());
        dir.extend_from_slice(&28u16.to_le_bytes()); // extra length
        dir.extend_from_slice(&0u16.to_le_bytes()); // comment
        dir.extend_from_slice(&0u16.to_le_bytes()); // disk
        dir.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
        dir.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        dir.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
        dir.extend_from_slice(fname.as_bytes());
        dir.extend_from_slice(&1u16.to_le_bytes());
        dir.extend_from_slice(&24u16.to_le_bytes());
        dir.extend_from_slice(&size.to_le_bytes());
        dir.extend_from_slice(&size.to_le_bytes());
        dir.extend_from_slice(&offset.to_le_bytes());
        offset += local.len() as u64 + size;
    }
    let entries = table.names.len() as u64;
    w.write_all(&dir)?;
    // Zip64 end record, its locator, then the classic end record pointing at them.
    let zip64_end = offset + dir.len() as u64;
    let mut end = Vec::new();
    end.extend_from_slice(b"PK\x06\x06");
    end.extend_from_slice(&44u64.to_le_bytes());
    end.extend_from_slice(&45u16.to_le_bytes());
    end.extend_from_slice(&45u16.to_le_bytes());
    end.extend_from_slice(&0u32.to_le_bytes());
    end.extend_from_slice(&0u32.to_le_bytes());
    end.extend_from_slice(&entries.to_le_bytes());
    end.extend_from_slice(&entries.to_le_bytes());
    end.extend_from_slice(&(dir.len() as u64).to_le_bytes());
    end.extend_from_slice(&offset.to_le_bytes());
    end.extend_from_slice(b"PK\x06\x07");
    end.extend_from_slice(&0u32.to_le_bytes());
    end.extend_from_slice(&zip64_end.to_le_bytes());
    end.extend_from_slice(&1u32.to_le_bytes());
    end.extend_from_slice(b"PK\x05\x06");
    end.extend_from_slice(&0u16.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    end.extend_from_slice(&0xFFFFu16.to_le_bytes());
    end.extend_from_slice(&0xFFFFu16.to_le_bytes());
    end.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
    end.extend_from_slice(&0xFFFF_FFFFu32.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    w.write_all(&end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table::new(
            vec!["y".into(), "x1".into(), "age".into()],
            vec![
                vec![0.0, 1.0, 1.0],
                vec![-1.5, 2.25e-300, 3.0],
                vec![27.0, 31.0, 45.0],
            ],
        )
        .unwrap()
    }

    #[test]
    fn npz_round_trips_bit_for_bit() {
        let t = table();
        let mut buf = Vec::new();
        write_npz(&mut buf, &t).unwrap();
        assert!(is_numpy(&buf));
        assert_eq!(read_numpy(&buf, "t.npz").unwrap(), t);
    }

    #[test]
    fn npy_tables_of_every_type_and_order() {
        let npy = |descr: &str, fortran: bool, shape: &str, data: &[u8]| {
            let h = format!(
                "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}\n",
                if fortran { "True" } else { "False" }
            );
            let mut b = NPY_MAGIC.to_vec();
            b.extend_from_slice(&[1, 0]);
            b.extend_from_slice(&(h.len() as u16).to_le_bytes());
            b.extend_from_slice(h.as_bytes());
            b.extend_from_slice(data);
            b
        };
        // 2 × 3, C order, int16: rows (1, -2, 3), (4, 5, -6).
        let d: Vec<u8> = [1i16, -2, 3, 4, 5, -6]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let t = read_numpy(&npy("<i2", false, "(2, 3)", &d), "a.npy").unwrap();
        assert_eq!(t.names, ["x0", "x1", "x2"]);
        assert_eq!(
            t.columns,
            [vec![1.0, 4.0], vec![-2.0, 5.0], vec![3.0, -6.0]]
        );
        // The same table stored in Fortran order, as f4.
        let d: Vec<u8> = [1f32, 4.0, -2.0, 5.0, 3.0, -6.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let f = read_numpy(&npy("<f4", true, "(2, 3)", &d), "a.npy").unwrap();
        assert_eq!(f, t);
        // Booleans and unsigned bytes, one column.
        let b = read_numpy(&npy("|b1", false, "(3,)", &[1, 0, 1]), "b.npy").unwrap();
        assert_eq!(b.columns, [vec![1.0, 0.0, 1.0]]);
        let u = read_numpy(&npy("|u1", false, "(2,)", &[255, 7]), "u.npy").unwrap();
        assert_eq!(u.columns, [vec![255.0, 7.0]]);
        // Refusals: big-endian, strings, truncation, NaN.
        let e = read_numpy(&npy(">f8", false, "(1,)", &[0; 8]), "e.npy").unwrap_err();
        assert!(e.contains("big-endian"), "{e}");
        let e = read_numpy(&npy("<U3", false, "(1,)", &[0; 12]), "e.npy").unwrap_err();
        assert!(e.contains("not supported"), "{e}");
        let e = read_numpy(&npy("<f8", false, "(4,)", &[0; 16]), "e.npy").unwrap_err();
        assert!(e.contains("truncated"), "{e}");
        let e = read_numpy(
            &npy(
                "<f8",
                false,
                "(2,)",
                &[0, 0, 0, 0, 0, 0, 0xF8, 0x7F, 0, 0, 0, 0, 0, 0, 0, 0],
            ),
            "e.npy",
        )
        .unwrap_err();
        assert_eq!(e, "e.npy: row 1, column \"x0\": NaN is not a finite number (NaN and infinities are not allowed)");
    }

    #[test]
    fn damaged_or_compressed_archives_are_refused_without_panic() {
        let mut buf = Vec::new();
        write_npz(&mut buf, &table()).unwrap();
        // Every truncation and every single-byte corruption: an error or a table, never a panic.
        for cut in (0..buf.len()).step_by(7) {
            let _ = read_numpy(&buf[..cut], "t.npz");
        }
        for at in (0..buf.len()).step_by(3) {
            let mut b = buf.clone();
            b[at] ^= 0xA5;
            let _ = read_numpy(&b, "t.npz");
        }
        // A compressed member (method 8) names numpy.savez.
        let dir = buf.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        let mut b = buf.clone();
        b[dir + 10] = 8;
        let e = read_numpy(&b, "t.npz").unwrap_err();
        assert!(e.contains("numpy.savez"), "{e}");
    }

    /// With a design plan, the design of `Design::from_table` on the file's table, bit for bit,
    /// decoded straight into the rows (in pieces on several threads when the table is tall);
    /// a file with an error gives `read_numpy`'s error; no plan, or one that does not fit,
    /// gives the table.
    #[test]
    fn designs_are_decoded_like_the_tables_design() {
        use tallmc_core::data::DesignSpec;
        let n = 3 * PIECE + 17;
        let col = |k: u64| -> Vec<f64> {
            (0..n as u64)
                .map(|i| ((i * 7919 + k * 104_729) % 1000) as f64 / 64.0 - 7.5)
                .collect()
        };
        let y: Vec<f64> = (0..n).map(|i| (i % 3 == 0) as u8 as f64).collect();
        let t = Table::new(
            vec!["a".into(), "y".into(), "b".into(), "c".into()],
            vec![col(1), y, col(2), col(3)],
        )
        .unwrap();
        let mut npz = Vec::new();
        write_npz(&mut npz, &t).unwrap();
        let spec = |response: &str, features: Option<Vec<String>>, intercept| DesignSpec {
            response: response.into(),
            features,
            intercept,
            standardize: false,
        };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let specs = [
            spec("y", None, true),
            spec("y", Some(vec!["c".into(), "a".into()]), false),
            spec("b", Some(vec!["y".into()]), true),
        ];
        for s in &specs {
            let plan = |names: &[String]| s.plan(names).ok();
            let want = tallmc_core::data::Design::from_table(&t, s).unwrap();
            match read_numpy_data(&npz, "t.npz", &plan).unwrap() {
                Data::Design { names, design } => {
                    assert_eq!(names, t.names, "{s:?}");
                    assert_eq!((design.n, design.d), (want.n, want.d), "{s:?}");
                    assert_eq!(design.names, want.names, "{s:?}");
                    assert_eq!(bits(&design.x), bits(&want.x), "{s:?}");
                    assert_eq!(bits(&design.y), bits(&want.y), "{s:?}");
                }
                other => panic!("{s:?}: {other:?}"),
            }
        }
        // No plan, or a plan for a column the file lacks: the table.
        for plan in [
            &(|_: &[String]| None) as &dyn Fn(&[String]) -> Option<DesignPlan>,
            &|names: &[String]| spec("nope", None, true).plan(names).ok(),
        ] {
            match read_numpy_data(&npz, "t.npz", plan).unwrap() {
                Data::Table(u) => assert_eq!(u, t),
                other => panic!("{other:?}"),
            }
        }
        // A value that is not finite, in a column the design reads or not: read_numpy's error.
        let plan = |names: &[String]| specs[1].plan(names).ok();
        for j in [0usize, 2] {
            let mut bad = t.clone();
            bad.columns[j][n - 5] = f64::INFINITY;
            let mut buf = Vec::new();
            write_npz(&mut buf, &bad).unwrap();
            let e = read_numpy_data(&buf, "t.npz", &plan).unwrap_err();
            assert_eq!(e, read_numpy(&buf, "t.npz").unwrap_err());
            assert!(e.contains(&format!("row {}", n - 4)), "{e}");
        }
        // Columns of different lengths: read_numpy's error.
        let mut short = t.clone();
        short.columns[2].pop();
        let mut buf = Vec::new();
        write_npz(&mut buf, &short).unwrap();
        let e = read_numpy_data(&buf, "t.npz", &plan).unwrap_err();
        assert_eq!(e, read_numpy(&buf, "t.npz").unwrap_err());
    }
}

//! Tabular data in memory: named numeric columns, then a design matrix for regression models.

use crate::error::Error;
use alloc::string::String;
use alloc::vec::Vec;

/// A numeric table: `ncols` named columns of `nrows` values, stored column-major.
/// The CLI and the browser parse CSV into this; simulators produce it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names, in file order.
    pub names: Vec<String>,
    /// `columns[j][i]` is row i of column j.
    pub columns: Vec<Vec<f64>>,
}

impl Table {
    /// A table from named columns; all columns must have the same length and finite values.
    pub fn new(names: Vec<String>, columns: Vec<Vec<f64>>) -> Result<Self, Error> {
        Self::checked(names, columns, true)
    }

    /// [`Table::new`] for columns whose values the caller has already found finite (a parser
    /// that refuses every non-finite cell, as the CLI's plain CSV path): the same checks of
    /// names and lengths, without a pass over the values. Models check finiteness again where
    /// they read the data (regression designs while writing their rows).
    pub fn new_finite(names: Vec<String>, columns: Vec<Vec<f64>>) -> Result<Self, Error> {
        Self::checked(names, columns, false)
    }

    /// [`Table::new`], the values' finiteness checked when `values`.
    fn checked(names: Vec<String>, columns: Vec<Vec<f64>>, values: bool) -> Result<Self, Error> {
        Error::check_dim("column names", columns.len(), names.len())?;
        let n = columns.first().map_or(0, |c| c.len());
        for (name, c) in names.iter().zip(&columns) {
            if c.len() != n {
                return Err(Error::InvalidData {
                    row: None,
                    column: Some(name.clone()),
                    msg: alloc::format!("column has {} rows, expected {n}", c.len()),
                });
            }
            if !values {
                continue;
            }
            if let Some(i) = c.iter().position(|v| !v.is_finite()) {
                return Err(Error::InvalidData {
                    row: Some(i + 1),
                    column: Some(name.clone()),
                    msg: String::from("value is not finite"),
                });
            }
        }
        Ok(Table { names, columns })
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.len())
    }

    /// Index of a column by name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The named columns in the order given, or an error naming the first missing one: one
    /// index of the names (O(k log k) for k columns), where [`Table::column`] per name would
    /// scan the header each time (quadratic in a table of 10⁶ columns).
    pub fn columns_named<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<&[f64]>, Error> {
        let mut index = alloc::collections::BTreeMap::new();
        for (j, n) in self.names.iter().enumerate() {
            index.entry(n.as_str()).or_insert(j);
        }
        names
            .iter()
            .map(|name| {
                let name = name.as_ref();
                index
                    .get(name)
                    .map(|&j| self.columns[j].as_slice())
                    .ok_or_else(|| Error::InvalidData {
                        row: None,
                        column: Some(name.into()),
                        msg: String::from("no such column in the data"),
                    })
            })
            .collect()
    }

    /// A column by name, or an error naming it.
    pub fn column(&self, name: &str) -> Result<&[f64], Error> {
        self.column_index(name)
            .map(|j| self.columns[j].as_slice())
            .ok_or_else(|| Error::InvalidData {
                row: None,
                column: Some(name.into()),
                msg: String::from("no such column in the data"),
            })
    }
}

/// A regression design: response `y` and a dense row-major `n × d` matrix `x`
/// (intercept column first when present), with one name per column of `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    /// Number of rows.
    pub n: usize,
    /// Number of columns of `x` (parameters of a GLM).
    pub d: usize,
    /// Row-major `n × d`.
    pub x: Vec<f64>,
    /// Response, length `n`.
    pub y: Vec<f64>,
    /// Column names of `x` (`intercept` first when added).
    pub names: Vec<String>,
}

/// How to turn a table into a design.
#[derive(Debug, Clone, PartialEq)]
pub struct DesignSpec {
    /// Response column name.
    pub response: String,
    /// Feature columns; `None` means every column except the response, in file order.
    pub features: Option<Vec<String>>,
    /// Add a leading column of ones named `intercept`.
    pub intercept: bool,
    /// Centre and scale each feature to mean 0, sd 1 (constant columns are only centred).
    pub standardize: bool,
}

impl DesignSpec {
    /// The feature columns of `t`: the given list, or every column except the response in
    /// file order.
    pub fn feature_names(&self, t: &Table) -> Vec<String> {
        match &self.features {
            Some(f) => f.clone(),
            None => t
                .names
                .iter()
                .filter(|c| **c != self.response)
                .cloned()
                .collect(),
        }
    }
}

/// Where a design's numbers are in a table with given column names, found from the names
/// alone ([`DesignSpec::plan`]): a reader that knows it before the rows can write each cell
/// straight into the design's rows (the CLI's CSV reader does).
#[derive(Debug, Clone, PartialEq)]
pub struct DesignPlan {
    /// The response's column.
    pub response: usize,
    /// The feature columns, in the design's order (after the intercept when there is one).
    pub features: Vec<usize>,
    /// A leading column of ones.
    pub intercept: bool,
    /// The design's column names (`intercept` first when added): d = `names.len()`.
    pub names: Vec<String>,
}

/// [`DesignPlan::places`] of a column the design does not read.
pub const UNREAD: usize = usize::MAX;

impl DesignPlan {
    /// Where each of a file's `ncol` columns goes in the design, for a reader that writes a
    /// file's values straight into its rows: the column's slot in a row of x (< d), d for the
    /// response, [`UNREAD`] for a column the design does not read. `None` when the plan does
    /// not fit such a file (a column index past `ncol`, names and columns that disagree, d = 0).
    pub fn places(&self, ncol: usize) -> Option<Vec<usize>> {
        let d = self.names.len();
        let off = usize::from(self.intercept);
        if d == 0 || self.response >= ncol || self.features.len() + off != d {
            return None;
        }
        let mut place = alloc::vec![UNREAD; ncol];
        for (k, &j) in self.features.iter().enumerate() {
            *place.get_mut(j)? = off + k;
        }
        place[self.response] = d;
        Some(place)
    }
}

impl DesignSpec {
    /// The design's columns in a table whose columns are `names`, or the error that
    /// [`Design::from_table`] gives for a table with those names and at least one row (the
    /// response missing, a feature clashing with the response, another feature or the
    /// intercept, a feature missing: in that order).
    pub fn plan(&self, names: &[String]) -> Result<DesignPlan, Error> {
        let missing = |name: &str| Error::InvalidData {
            row: None,
            column: Some(name.into()),
            msg: String::from("no such column in the data"),
        };
        let response = names
            .iter()
            .position(|c| *c == self.response)
            .ok_or_else(|| missing(&self.response))?;
        let feats: Vec<String> = match &self.features {
            Some(f) => f.clone(),
            None => names
                .iter()
                .filter(|c| **c != self.response)
                .cloned()
                .collect(),
        };
        let mut seen = alloc::collections::BTreeSet::new();
        for f in &feats {
            let clash = if *f == self.response {
                Some("is the response and cannot also be a feature")
            } else if !seen.insert(f.as_str()) {
                Some("is listed twice as a feature")
            } else if self.intercept && f == "intercept" {
                Some("clashes with the added intercept (drop the intercept or rename the column)")
            } else {
                None
            };
            if let Some(msg) = clash {
                return Err(Error::InvalidData {
                    row: None,
                    column: Some(f.clone()),
                    msg: String::from(msg),
                });
            }
        }
        // The first column of each name, as `Table::columns_named`.
        let mut index = alloc::collections::BTreeMap::new();
        for (j, c) in names.iter().enumerate() {
            index.entry(c.as_str()).or_insert(j);
        }
        let features = feats
            .iter()
            .map(|f| index.get(f.as_str()).copied().ok_or_else(|| missing(f)))
            .collect::<Result<Vec<usize>, Error>>()?;
        let mut design_names = Vec::with_capacity(feats.len() + 1);
        if self.intercept {
            design_names.push(String::from("intercept"));
        }
        design_names.extend(feats);
        Ok(DesignPlan {
            response,
            features,
            intercept: self.intercept,
            names: design_names,
        })
    }
}

impl Design {
    /// Build a design from a table. Errors name the missing column.
    pub fn from_table(t: &Table, spec: &DesignSpec) -> Result<Self, Error> {
        Self::from_table_on(t, spec, None)
    }

    /// [`from_table`](Self::from_table), the rows written in pieces on `parallel`'s threads
    /// when given (each row's numbers do not depend on the piece: the same design).
    pub fn from_table_on(
        t: &Table,
        spec: &DesignSpec,
        parallel: Option<&dyn crate::parallel::ParallelFor>,
    ) -> Result<Self, Error> {
        Self::from_table_finite_on(t, spec, parallel).map(|(design, _)| design)
    }

    /// [`Design::from_table_on`], and whether every value it read (the response and the
    /// features, before standardising) is finite: checked while the rows are written, so that
    /// regression models need no separate pass over the table for it.
    pub(crate) fn from_table_finite_on(
        t: &Table,
        spec: &DesignSpec,
        parallel: Option<&dyn crate::parallel::ParallelFor>,
    ) -> Result<(Self, bool), Error> {
        let y = t.column(&spec.response)?.to_vec();
        let n = y.len();
        if n == 0 {
            return Err(Error::data("the data set has no rows"));
        }
        let plan = spec.plan(&t.names)?;
        let cols: Vec<&[f64]> = plan
            .features
            .iter()
            .map(|&j| t.columns[j].as_slice())
            .collect();
        let names = plan.names;
        let d = names.len();
        let off = usize::from(spec.intercept);
        let mut shift = alloc::vec![0.0; cols.len()];
        let mut scale = alloc::vec![1.0; cols.len()];
        if spec.standardize {
            for (j, c) in cols.iter().enumerate() {
                let m = c.iter().sum::<f64>() / n as f64;
                let v = c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64;
                shift[j] = m;
                if v > 0.0 {
                    scale[j] = 1.0 / crate::math::sqrt(v);
                }
            }
        }
        let mut x = alloc::vec![0.0; n * d];
        // Pieces of PASS_CHUNK rows: on a tall table most of the time goes to the kernel
        // mapping the design's fresh pages, which the threads then share.
        let rows_per = crate::parallel::PASS_CHUNK;
        let finite = core::sync::atomic::AtomicBool::new(true);
        crate::parallel::for_each_piece(parallel, &mut x, rows_per * d.max(1), &|k, piece| {
            let i0 = k * rows_per;
            let mut ok = true;
            for (r, row) in piece.chunks_exact_mut(d.max(1)).enumerate() {
                let i = i0 + r;
                if spec.intercept {
                    row[0] = 1.0;
                }
                for (j, c) in cols.iter().enumerate() {
                    let v = c[i];
                    ok &= v.is_finite();
                    row[off + j] = (v - shift[j]) * scale[j];
                }
            }
            if !ok {
                finite.store(false, core::sync::atomic::Ordering::Relaxed);
            }
        });
        let finite = finite.into_inner() && y.iter().all(|v| v.is_finite());
        Ok((Design { n, d, x, y, names }, finite))
    }

    /// Row i of `x`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_finite_checks_names_and_lengths_but_not_values() {
        let names = || alloc::vec![String::from("a"), String::from("b")];
        let t = Table::new_finite(
            names(),
            alloc::vec![alloc::vec![1.0, f64::NAN], alloc::vec![2.0, 3.0]],
        )
        .unwrap();
        assert!(t.columns[0][1].is_nan());
        assert!(Table::new(names(), t.columns.clone()).is_err());
        assert!(Table::new_finite(names(), alloc::vec![alloc::vec![1.0]]).is_err());
        match Table::new_finite(
            names(),
            alloc::vec![alloc::vec![1.0], alloc::vec![2.0, 3.0]],
        ) {
            Err(Error::InvalidData {
                column: Some(c),
                row: None,
                ..
            }) => assert_eq!(c, "b"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn columns_named_agrees_with_column_and_names_the_missing_one() {
        let t = Table {
            names: alloc::vec!["a".into(), "b".into(), "c".into()],
            columns: alloc::vec![alloc::vec![1.0], alloc::vec![2.0], alloc::vec![3.0]],
        };
        let got = t.columns_named(&["c", "a", "c"]).unwrap();
        assert_eq!(
            got,
            [
                t.column("c").unwrap(),
                t.column("a").unwrap(),
                t.column("c").unwrap()
            ]
        );
        match t.columns_named(&["a", "zz"]) {
            Err(Error::InvalidData {
                column: Some(c), ..
            }) => assert_eq!(c, "zz"),
            other => panic!("{other:?}"),
        }
    }

    /// A plan's places over a file's columns: each feature's slot (after the intercept), the
    /// response at d, the other columns unread; a plan that does not fit the file gives none.
    #[test]
    fn plan_places_name_each_columns_slot() {
        let names: Vec<String> = ["a", "y", "b", "c"]
            .iter()
            .map(|s| String::from(*s))
            .collect();
        let spec = DesignSpec {
            response: "y".into(),
            features: Some(alloc::vec!["c".into(), "a".into()]),
            intercept: true,
            standardize: false,
        };
        let plan = spec.plan(&names).unwrap();
        assert_eq!(plan.places(4), Some(alloc::vec![2, 3, UNREAD, 1]));
        assert_eq!(plan.places(3), None, "column c is past the file's columns");
        let no_intercept = DesignSpec {
            intercept: false,
            ..spec
        };
        assert_eq!(
            no_intercept.plan(&names).unwrap().places(4),
            Some(alloc::vec![1, 2, UNREAD, 0])
        );
    }
}

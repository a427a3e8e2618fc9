//! Record batches into ring batches ([`Converter`]): the time column to integer nanoseconds,
//! the value columns to f32 (decimals, dictionaries, booleans; clamps and gaps counted), rows
//! with no time removed.

use super::*;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type,
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};
use arrow_buffer::{ArrowNativeType, NullBuffer, i256};
use arrow_schema::{DataType, TimeUnit as ArrowUnit};
use std::ops::Range;

/// Converts record batches into [`Batch`]es: the time column to integer nanoseconds, the value
/// columns to f32.
pub(super) struct Converter {
    /// The file, as messages name it.
    pub(super) path: String,
    /// Position of the time column in the (projected) record batches.
    pub(super) time: usize,
    pub(super) kind: TimeKind,
    /// Position and series name of each value column.
    pub(super) values: Vec<(usize, String)>,
    /// Rows of the record batches before the current one.
    pub(super) rows: u64,
    /// The current record batch's times, and the rows among them that have none.
    pub(super) times: Vec<i64>,
    pub(super) bad: Vec<usize>,
}

/// A value column of one record batch, ready to be read by ranges of rows.
pub(super) enum Prepared<'a> {
    Plain(&'a dyn Array),
    /// A dictionary: each row's index into `values`, the values converted once (with whether
    /// each was clamped), and the rows' nulls.
    Dict {
        keys: Vec<usize>,
        values: Vec<f32>,
        clamped: Vec<bool>,
        nulls: Option<NullBuffer>,
    },
}

/// Clamped cells of one range: how many, and the first (row in the record batch, value); cells
/// of the rows in `skip` (sorted: rows with no time, which leave the batch) are not counted.
#[derive(Default)]
pub(super) struct Clamps<'a> {
    count: u64,
    first: Option<(usize, f64)>,
    skip: &'a [usize],
}

impl Clamps<'_> {
    fn note(&mut self, row: usize, v: f64) {
        if self.skip.binary_search(&row).is_ok() {
            return;
        }
        self.count += 1;
        self.first.get_or_insert((row, v));
    }
}

impl Converter {
    /// Converts record batch `rb` into batches of at most [`BATCH_ROWS`] rows taken from
    /// `fresh` and handed to `emit` (with a `Skipped` after a batch that lost rows with no
    /// time); returns `false` when `emit` did (stopped).
    pub(super) fn convert(
        &mut self,
        rb: &RecordBatch,
        fresh: &mut impl FnMut() -> Batch,
        emit: &mut impl FnMut(Msg) -> bool,
    ) -> bool {
        let n = rb.num_rows();
        self.times.clear();
        self.bad.clear();
        times_of(
            rb.column(self.time).as_ref(),
            self.kind,
            &mut self.times,
            &mut self.bad,
        );
        let prepared: Vec<Prepared> = self
            .values
            .iter()
            .map(|&(c, _)| prepare(rb.column(c).as_ref()))
            .collect();
        let mut bad_at = 0;
        let mut start = 0;
        while start < n {
            let end = (start + BATCH_ROWS).min(n);
            let mut batch = fresh();
            batch.ensure_columns(self.values.len());
            batch.times_ns.extend_from_slice(&self.times[start..end]);
            for (j, col) in prepared.iter().enumerate() {
                let mut clamps = Clamps {
                    skip: &self.bad,
                    ..Clamps::default()
                };
                push_range(col, start..end, &mut batch.columns[j], &mut clamps);
                if clamps.count > 0 {
                    batch.clamped += clamps.count;
                    if batch.clamp_note.is_none()
                        && let Some((row, v)) = clamps.first
                    {
                        batch.clamp_note = Some(format!(
                            "series file '{}' row {}: column '{}': {v:e} is beyond the f32 \
                             range (±3.4e38); drawn clamped to ±3.4e38",
                            self.path,
                            self.rows + row as u64 + 1,
                            vizdeck_base::text::one_line(&self.values[j].1),
                        ));
                    }
                }
            }
            // Rows with no time leave the batch.
            let first_bad = bad_at;
            while bad_at < self.bad.len() && self.bad[bad_at] < end {
                bad_at += 1;
            }
            let skipped = &self.bad[first_bad..bad_at];
            if !skipped.is_empty() {
                remove_rows(&mut batch.times_ns, skipped, start);
                for c in &mut batch.columns {
                    remove_rows(c, skipped, start);
                }
            }
            batch.sort_rows();
            if batch.rows() > 0 && !emit(Msg::Batch(batch)) {
                return false;
            }
            if !skipped.is_empty() {
                let w = format!(
                    "series file '{}' row {}: no time (null, or beyond ±292 years in ns); \
                     {} such row(s) of rows {}–{} skipped",
                    self.path,
                    self.rows + skipped[0] as u64 + 1,
                    skipped.len(),
                    self.rows + start as u64 + 1,
                    self.rows + end as u64,
                );
                let rows = skipped.len() as u64;
                if !emit(Msg::Skipped { first: w, rows }) {
                    return false;
                }
            }
            start = end;
        }
        self.rows += n as u64;
        true
    }
}

/// Removes from `v` (rows `offset..` of a record batch) the rows `rows` (sorted, record batch
/// numbering).
pub(super) fn remove_rows<T: Copy>(v: &mut Vec<T>, rows: &[usize], offset: usize) {
    let mut k = 0;
    let mut i = 0;
    v.retain(|_| {
        let row = offset + i;
        i += 1;
        if k < rows.len() && rows[k] == row {
            k += 1;
            false
        } else {
            true
        }
    });
}

/// Appends the times of array `a` as integer nanoseconds to `out` (one per row), and the rows
/// with no time (null, not representable) to `bad`, in order.
pub(super) fn times_of(a: &dyn Array, kind: TimeKind, out: &mut Vec<i64>, bad: &mut Vec<usize>) {
    fn ints<T: ArrowPrimitiveType>(
        a: &dyn Array,
        mul: i64,
        out: &mut Vec<i64>,
        bad: &mut Vec<usize>,
    ) {
        let p = a.as_primitive::<T>();
        let nulls = p.nulls().filter(|n| n.null_count() > 0);
        out.reserve(p.len());
        for (i, &v) in p.values().iter().enumerate() {
            let ns = v.to_i64().and_then(|v| v.checked_mul(mul));
            match ns {
                Some(ns) if nulls.is_none_or(|n| n.is_valid(i)) => out.push(ns),
                _ => {
                    bad.push(i);
                    out.push(0);
                }
            }
        }
    }
    fn floats<T: ArrowPrimitiveType>(
        a: &dyn Array,
        mul: f64,
        f: impl Fn(T::Native) -> f64,
        out: &mut Vec<i64>,
        bad: &mut Vec<usize>,
    ) {
        let p = a.as_primitive::<T>();
        let nulls = p.nulls().filter(|n| n.null_count() > 0);
        out.reserve(p.len());
        for (i, &v) in p.values().iter().enumerate() {
            let ns = (f(v) * mul).round();
            if ns.is_finite() && ns.abs() < 9.2e18 && nulls.is_none_or(|n| n.is_valid(i)) {
                out.push(ns as i64);
            } else {
                bad.push(i);
                out.push(0);
            }
        }
    }
    match (kind, a.data_type()) {
        (TimeKind::Float(mul), DataType::Float16) => {
            floats::<Float16Type>(a, mul, |v| v.to_f64(), out, bad)
        }
        (TimeKind::Float(mul), DataType::Float32) => {
            floats::<Float32Type>(a, mul, f64::from, out, bad)
        }
        (TimeKind::Float(mul), _) => floats::<Float64Type>(a, mul, |v| v, out, bad),
        (TimeKind::Int(mul), t) => match t {
            DataType::Int8 => ints::<Int8Type>(a, mul, out, bad),
            DataType::Int16 => ints::<Int16Type>(a, mul, out, bad),
            DataType::Int32 => ints::<Int32Type>(a, mul, out, bad),
            DataType::Int64 => ints::<Int64Type>(a, mul, out, bad),
            DataType::UInt8 => ints::<UInt8Type>(a, mul, out, bad),
            DataType::UInt16 => ints::<UInt16Type>(a, mul, out, bad),
            DataType::UInt32 => ints::<UInt32Type>(a, mul, out, bad),
            DataType::UInt64 => ints::<UInt64Type>(a, mul, out, bad),
            DataType::Date32 => ints::<Date32Type>(a, mul, out, bad),
            DataType::Date64 => ints::<Date64Type>(a, mul, out, bad),
            DataType::Time32(ArrowUnit::Second) => ints::<Time32SecondType>(a, mul, out, bad),
            DataType::Time32(_) => ints::<Time32MillisecondType>(a, mul, out, bad),
            DataType::Time64(ArrowUnit::Microsecond) => {
                ints::<Time64MicrosecondType>(a, mul, out, bad)
            }
            DataType::Time64(_) => ints::<Time64NanosecondType>(a, mul, out, bad),
            DataType::Timestamp(ArrowUnit::Second, _) => {
                ints::<TimestampSecondType>(a, mul, out, bad)
            }
            DataType::Timestamp(ArrowUnit::Millisecond, _) => {
                ints::<TimestampMillisecondType>(a, mul, out, bad)
            }
            DataType::Timestamp(ArrowUnit::Microsecond, _) => {
                ints::<TimestampMicrosecondType>(a, mul, out, bad)
            }
            DataType::Timestamp(ArrowUnit::Nanosecond, _) => {
                ints::<TimestampNanosecondType>(a, mul, out, bad)
            }
            DataType::Duration(ArrowUnit::Second) => ints::<DurationSecondType>(a, mul, out, bad),
            DataType::Duration(ArrowUnit::Millisecond) => {
                ints::<DurationMillisecondType>(a, mul, out, bad)
            }
            DataType::Duration(ArrowUnit::Microsecond) => {
                ints::<DurationMicrosecondType>(a, mul, out, bad)
            }
            DataType::Duration(ArrowUnit::Nanosecond) => {
                ints::<DurationNanosecondType>(a, mul, out, bad)
            }
            // Not a time type `plan` chooses: every row lacks a time.
            _ => {
                bad.extend(0..a.len());
                out.resize(out.len() + a.len(), 0);
            }
        },
    }
}

/// Readies value column `a` of a record batch: a dictionary's values are converted once.
pub(super) fn prepare(a: &dyn Array) -> Prepared<'_> {
    let Some(d) = a.as_any_dictionary_opt() else {
        return Prepared::Plain(a);
    };
    let values = d.values().as_ref();
    let mut converted = Vec::with_capacity(values.len());
    let mut clamps = Clamps::default();
    push_range(
        &Prepared::Plain(values),
        0..values.len(),
        &mut converted,
        &mut clamps,
    );
    // Which values were clamped (rare: converted again one by one).
    let clamped = if clamps.count > 0 {
        (0..values.len())
            .map(|i| {
                let mut one = Vec::with_capacity(1);
                let mut c = Clamps::default();
                push_range(&Prepared::Plain(values), i..i + 1, &mut one, &mut c);
                c.count > 0
            })
            .collect()
    } else {
        Vec::new()
    };
    Prepared::Dict {
        keys: d.normalized_keys(),
        values: converted,
        clamped,
        nulls: d.keys().logical_nulls(),
    }
}

/// Appends rows `r` of value column `col` to `out` as f32: nulls, NaN and ±inf as NaN, numbers
/// beyond the f32 range as ±`f32::MAX`, counted in `clamps` (with rows numbered in the record
/// batch).
pub(super) fn push_range(
    col: &Prepared<'_>,
    r: Range<usize>,
    out: &mut Vec<f32>,
    clamps: &mut Clamps,
) {
    let a = match col {
        Prepared::Plain(a) => *a,
        Prepared::Dict {
            keys,
            values,
            clamped,
            nulls,
        } => {
            out.reserve(r.len());
            for i in r {
                let k = keys[i];
                if nulls.as_ref().is_some_and(|n| n.is_null(i)) || k >= values.len() {
                    out.push(f32::NAN);
                } else {
                    out.push(values[k]);
                    if clamped.get(k) == Some(&true) {
                        clamps.note(i, f64::from(values[k]));
                    }
                }
            }
            return;
        }
    };
    let base = out.len();
    match a.data_type() {
        DataType::Int8 => narrow::<Int8Type>(a, r.clone(), out, f32::from),
        DataType::Int16 => narrow::<Int16Type>(a, r.clone(), out, f32::from),
        DataType::Int32 => narrow::<Int32Type>(a, r.clone(), out, |v| v as f32),
        DataType::Int64 => narrow::<Int64Type>(a, r.clone(), out, |v| v as f32),
        DataType::UInt8 => narrow::<UInt8Type>(a, r.clone(), out, f32::from),
        DataType::UInt16 => narrow::<UInt16Type>(a, r.clone(), out, f32::from),
        DataType::UInt32 => narrow::<UInt32Type>(a, r.clone(), out, |v| v as f32),
        DataType::UInt64 => narrow::<UInt64Type>(a, r.clone(), out, |v| v as f32),
        DataType::Float16 => narrow::<Float16Type>(a, r.clone(), out, |v| finite(v.to_f32())),
        DataType::Float32 => narrow::<Float32Type>(a, r.clone(), out, finite),
        DataType::Float64 => wide::<Float64Type>(a, r.clone(), out, clamps, |v| v),
        DataType::Decimal32(_, s) => {
            let div = 10f64.powi(i32::from(*s));
            wide::<Decimal32Type>(a, r.clone(), out, clamps, |v| f64::from(v) / div)
        }
        DataType::Decimal64(_, s) => {
            let div = 10f64.powi(i32::from(*s));
            wide::<Decimal64Type>(a, r.clone(), out, clamps, |v| v as f64 / div)
        }
        DataType::Decimal128(_, s) => {
            let div = 10f64.powi(i32::from(*s));
            wide::<Decimal128Type>(a, r.clone(), out, clamps, |v| v as f64 / div)
        }
        DataType::Decimal256(_, s) => {
            let div = 10f64.powi(i32::from(*s));
            wide::<Decimal256Type>(a, r.clone(), out, clamps, |v| i256_f64(v) / div)
        }
        DataType::Boolean => {
            let b = a.as_boolean();
            out.extend(r.clone().map(|i| f32::from(u8::from(b.value(i)))));
        }
        // Not a value type `plan` chooses: gaps.
        _ => out.resize(base + r.len(), f32::NAN),
    }
    if let Some(n) = a.nulls().filter(|n| n.null_count() > 0) {
        for (k, i) in r.enumerate() {
            if n.is_null(i) {
                out[base + k] = f32::NAN;
            }
        }
    }
}

/// NaN for ±inf (a gap, as in CSV files), else `v`.
pub(super) fn finite(v: f32) -> f32 {
    if v.is_finite() { v } else { f32::NAN }
}

/// A 256-bit decimal's integer as f64 (to about 16 significant digits).
pub(super) fn i256_f64(v: i256) -> f64 {
    let (low, high) = v.to_parts();
    high as f64 * 2f64.powi(128) + low as f64
}

/// Appends rows `r` of primitive array `a` through `f`, a conversion that cannot leave the f32
/// range (nulls are set afterwards).
pub(super) fn narrow<T: ArrowPrimitiveType>(
    a: &dyn Array,
    r: Range<usize>,
    out: &mut Vec<f32>,
    f: impl Fn(T::Native) -> f32,
) {
    let p = a.as_primitive::<T>();
    out.extend(p.values()[r].iter().map(|&v| f(v)));
}

/// Appends rows `r` of primitive array `a` through `f` to f64, then to f32: non-finite as NaN,
/// beyond the f32 range clamped to ±`f32::MAX` and counted in `clamps` (valid rows only).
/// One pass that vectorises, then a fix-up pass over the rare cells that came out infinite.
pub(super) fn wide<T: ArrowPrimitiveType>(
    a: &dyn Array,
    r: Range<usize>,
    out: &mut Vec<f32>,
    clamps: &mut Clamps,
    f: impl Fn(T::Native) -> f64,
) {
    let p = a.as_primitive::<T>();
    let vals = &p.values()[r.clone()];
    let base = out.len();
    out.extend(vals.iter().map(|&v| f(v) as f32));
    if out[base..].iter().all(|y| y.is_finite()) {
        return;
    }
    for (k, y) in out[base..].iter_mut().enumerate() {
        if y.is_finite() {
            continue;
        }
        let x = f(vals[k]);
        if x.is_finite() {
            *y = f32::MAX.copysign(*y);
            if p.is_valid(r.start + k) {
                clamps.note(r.start + k, x);
            }
        } else {
            *y = f32::NAN;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_removed_by_record_batch_index() {
        let mut v: Vec<u32> = (10..20).collect();
        // The batch holds rows 10..20 of its record batch; rows 10, 13 and 19 go.
        remove_rows(&mut v, &[10, 13, 19], 10);
        assert_eq!(v, [11, 12, 14, 15, 16, 17, 18]);
    }
}

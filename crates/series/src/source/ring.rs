//! What travels from a producer thread to the render thread: rows of samples ([`Batch`]), the
//! ring's messages ([`Msg`]), the waiting push ([`send`]) and the start of a producer thread
//! with its two rings ([`spawn_producer`]).

use super::*;

/// Rows of samples for all series of a source, column-major so that each series' values are one
/// slice for [`Series::push_slice`](super::store::Series::push_slice): `columns[series][row]`,
/// `times[row]`; NaN is a gap.
#[derive(Debug, Default)]
pub(super) struct Batch {
    /// Row times in seconds (synthetic sources, CSV times that are not exact decimals).
    pub(super) times: Vec<f64>,
    /// Row times in integer nanoseconds (CSV times read exactly, see [`parse_time_ns`]); a batch
    /// fills either this or `times`.
    pub(super) times_ns: Vec<i64>,
    pub(super) columns: Vec<Vec<f32>>,
    /// Value cells beyond the f32 range that were clamped to ±`f32::MAX`.
    pub(super) clamped: u64,
    /// Where the batch's first clamped cell is (one line), if any.
    pub(super) clamp_note: Option<String>,
    /// Rows that were earlier than the row before them and were sorted into place.
    pub(super) rows_sorted: u64,
    /// Samples of sources whose rows or messages each carry their own series (long-format CSV,
    /// network messages): `(series index in source order, time in integer ns, value)`.
    pub(super) points: Vec<(u32, i64, f32)>,
    /// Rows or messages behind `points`.
    pub(super) point_rows: usize,
    /// Rows or messages not stored because their series would pass [`MAX_SERIES`].
    pub(super) refused: u64,
    /// Network sources: the payload time of each message whose time came from its time field
    /// (integer ns since the Unix epoch), for the publish → present latency.
    pub(super) msg_times: Vec<i64>,
    /// Names of series this batch starts, appended in order to the source's names before the
    /// batch is stored (their indices follow the existing ones).
    pub(super) new_names: Vec<String>,
}

impl Batch {
    pub(super) fn clear(&mut self) {
        self.times.clear();
        self.times_ns.clear();
        for c in &mut self.columns {
            c.clear();
        }
        self.clamped = 0;
        self.clamp_note = None;
        self.rows_sorted = 0;
        self.points.clear();
        self.point_rows = 0;
        self.refused = 0;
        self.msg_times.clear();
        self.new_names.clear();
    }

    /// Sorts the rows by time, stably (rows with equal times keep their order), so that rows
    /// written out of order inside one batch reach the store in place. Counts in `rows_sorted`
    /// the rows earlier than the row before them (the store's definition of out of order).
    /// Costs one pass when the rows are already in order.
    pub(super) fn sort_rows(&mut self) {
        if !self.points.is_empty() {
            // Per series: a point earlier than the previous point of its series is late.
            let mut last: std::collections::HashMap<u32, i64> = std::collections::HashMap::new();
            let mut late = 0u64;
            for &(s, t, _) in &self.points {
                let prev = last.entry(s).or_insert(t);
                if t < *prev {
                    late += 1;
                } else {
                    *prev = t;
                }
            }
            if late > 0 {
                self.points.sort_by_key(|&(s, t, _)| (s, t));
                self.rows_sorted += late;
            }
        }
        let late = if self.times_ns.is_empty() {
            self.times.windows(2).filter(|w| w[1] < w[0]).count()
        } else {
            self.times_ns.windows(2).filter(|w| w[1] < w[0]).count()
        };
        if late == 0 {
            return;
        }
        let mut order: Vec<usize> = (0..self.rows()).collect();
        if self.times_ns.is_empty() {
            let t = &self.times;
            order.sort_by(|&a, &b| t[a].total_cmp(&t[b]));
            self.times = order.iter().map(|&i| t[i]).collect();
        } else {
            let t = &self.times_ns;
            order.sort_by_key(|&i| t[i]);
            self.times_ns = order.iter().map(|&i| t[i]).collect();
        }
        for column in &mut self.columns {
            *column = order.iter().map(|&i| column[i]).collect();
        }
        self.rows_sorted += late as u64;
    }

    /// Rows in the batch.
    pub(super) fn rows(&self) -> usize {
        self.times
            .len()
            .max(self.times_ns.len())
            .max(self.point_rows)
    }

    /// Makes sure there are `n` columns.
    pub(super) fn ensure_columns(&mut self, n: usize) {
        self.columns.resize_with(n, Vec::new);
    }
}

pub(super) enum Msg {
    Batch(Batch),
    /// A late error; the thread has stopped.
    Error(String),
    /// All input delivered; the thread has stopped.
    Done,
    /// `rows` rows were skipped; `first` says where the first was and why. The thread goes on.
    Skipped {
        first: String,
        rows: u64,
    },
    /// CSV: the distinct values of each [`KeyCandidate`] column over the whole file (capped
    /// at [`KEY_MAX_VALUES`] + 1), sent before `Done`.
    KeyValues(Vec<usize>),
}

/// Starts a producer thread named `name` with rings of `ring` batches: `run` gets the sending
/// side, the recycled batches and the stop flag; the returned [`Inner`] is the render side.
///
/// # Errors
///
/// [`SeriesError::Spawn`] naming `label` when the thread cannot start.
pub(super) fn spawn_producer(
    name: &str,
    label: &str,
    ring: usize,
    run: impl FnOnce(Producer<Msg>, Consumer<Batch>, &AtomicBool) + Send + 'static,
) -> Result<Inner, SeriesError> {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = RingBuffer::new(ring);
    let (recycle, recycled) = RingBuffer::new(ring);
    let thread_stop = stop.clone();
    let handle = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || run(tx, recycled, &thread_stop))
        .map_err(|source| SeriesError::Spawn {
            label: label.to_string(),
            source,
        })?;
    Ok(Inner::Thread {
        rx,
        recycle,
        stop,
        lost: Arc::new(AtomicU64::new(0)),
        handle: Some(handle),
    })
}

/// Pushes `msg`, waiting while the ring is full. Returns `false` if stopped meanwhile.
pub(super) fn send(tx: &mut Producer<Msg>, mut msg: Msg, stop: &AtomicBool) -> bool {
    loop {
        match tx.push(msg) {
            Ok(()) => return true,
            Err(PushError::Full(m)) => {
                if stop.load(Ordering::Relaxed) || tx.is_abandoned() {
                    return false;
                }
                msg = m;
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

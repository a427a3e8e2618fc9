//! The synthetic source: seeded random walks, price ticks in bursts, or sines, any number of
//! series, generated on their producer thread at the requested rate.

use super::*;

/// splitmix64 (Steele, Lea, Flood 2014): seeds the per-series generators.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xorshift64* (Vigna 2016): one uniform draw in [0, 1).
fn next_unit(state: &mut u64) -> f64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
    (r >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// What the synthetic generator draws (`--series-kind`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum SynthKind {
    /// Mean-reverting random walks: a discretised Ornstein–Uhlenbeck process with time constant
    /// 2 s and unit stationary standard deviation (uniform steps), whatever the rate.
    #[default]
    Walk,
    /// Prices on a tick grid that move in bursts: each series starts at 100.00 and moves by whole
    /// ticks of 0.01; a two-state Markov chain alternates quiet stretches (about 5 one-tick moves/s)
    /// with bursts (about 500 moves/s of 1 to 3 ticks); bursts start about every 2 s and last about
    /// 0.2 s on average.
    Ticks,
    /// Sines: series `i` is `sin(2π · 0.5 Hz · (i + 1) · t)` exactly (t in seconds).
    Sines,
}

impl SynthKind {
    /// Series name stem and label noun (singular, plural).
    fn words(self) -> (&'static str, &'static str, &'static str) {
        match self {
            SynthKind::Walk => ("walk", "random walk", "random walks"),
            SynthKind::Ticks => ("ticks", "tick series (bursts)", "tick series (bursts)"),
            SynthKind::Sines => ("sine", "sine", "sines"),
        }
    }
}

/// Base frequency of [`SynthKind::Sines`]: series `i` runs at `(i + 1)` times it, Hz.
pub const SYNTH_SINE_BASE_HZ: f64 = 0.5;
/// Tick size of [`SynthKind::Ticks`].
pub const SYNTH_TICK: f64 = 0.01;
/// Starting price of [`SynthKind::Ticks`].
pub const SYNTH_TICK_START: f64 = 100.0;
/// [`SynthKind::Ticks`]: moves per second while quiet and during a burst.
const TICK_QUIET_MOVES_PER_S: f64 = 5.0;
const TICK_BURST_MOVES_PER_S: f64 = 500.0;
/// [`SynthKind::Ticks`]: bursts started per second of quiet, and mean burst length in seconds.
const TICK_BURSTS_PER_S: f64 = 0.5;
const TICK_BURST_MEAN_S: f64 = 0.2;
/// [`SynthKind::Ticks`]: largest move during a burst, in ticks.
const TICK_BURST_MAX_TICKS: f64 = 3.0;

/// Deterministic generator of `n` series of one [`SynthKind`] sampled at `k / rate` seconds.
pub(super) struct Synth {
    kind: SynthKind,
    rate: f64,
    pub(super) next_k: u64,
    rng: Vec<u64>,
    /// Walk: the walk's value. Ticks: the price in whole ticks above the start.
    state: Vec<f64>,
    /// Ticks: inside a burst.
    burst: Vec<bool>,
    decay: f64,
    step: f64,
}

impl Synth {
    fn new(kind: SynthKind, n: usize, rate: f64, seed: u64) -> Synth {
        let mut sm = seed;
        let rng = (0..n)
            .map(|_| splitmix64(&mut sm).max(1)) // xorshift state must be non-zero
            .collect();
        let decay = (-1.0 / (rate * SYNTH_TAU_S)).exp();
        // Uniform in [-1, 1) has variance 1/3; scale so the stationary variance is 1.
        let step = (3.0 * (1.0 - decay * decay)).sqrt();
        Synth {
            kind,
            rate,
            next_k: 0,
            rng,
            state: vec![0.0; n],
            burst: vec![false; n],
            decay,
            step,
        }
    }

    fn time_of(&self, k: u64) -> f64 {
        k as f64 / self.rate
    }

    /// Number of samples (per series) with time `< t`.
    pub(super) fn count_before(&self, t: f64) -> u64 {
        if t.is_nan() || t <= 0.0 {
            return 0;
        }
        let mut k = (t * self.rate).ceil().min(9.0e15) as u64;
        while k > 0 && self.time_of(k - 1) >= t {
            k -= 1;
        }
        while self.time_of(k) < t {
            k += 1;
        }
        k
    }

    /// Appends rows `next_k..end` to `batch` (one column per series).
    pub(super) fn fill(&mut self, end: u64, batch: &mut Batch) {
        let n = self.state.len();
        let (k0, k1) = (self.next_k, end.max(self.next_k));
        let rows = (k1 - k0) as usize;
        batch.ensure_columns(n);
        let at = batch.times.len();
        batch.times.extend((k0..k1).map(|k| self.time_of(k)));
        let times = &batch.times[at..];
        let per_sample = |per_s: f64| (per_s / self.rate).min(1.0);
        let (p_quiet, p_busy) = (
            per_sample(TICK_QUIET_MOVES_PER_S),
            per_sample(TICK_BURST_MOVES_PER_S),
        );
        let (p_start, p_end) = (
            per_sample(TICK_BURSTS_PER_S),
            per_sample(1.0 / TICK_BURST_MEAN_S),
        );
        for (s, column) in batch.columns.iter_mut().enumerate() {
            column.reserve(rows);
            let rng = &mut self.rng[s];
            let x = &mut self.state[s];
            match self.kind {
                SynthKind::Walk => column.extend((0..rows).map(|_| {
                    let u = next_unit(rng) * 2.0 - 1.0;
                    *x = *x * self.decay + u * self.step;
                    *x as f32
                })),
                SynthKind::Sines => {
                    let w = std::f64::consts::TAU * SYNTH_SINE_BASE_HZ * (s + 1) as f64;
                    column.extend(times.iter().map(|&t| (w * t).sin() as f32));
                }
                SynthKind::Ticks => {
                    let burst = &mut self.burst[s];
                    column.extend((0..rows).map(|_| {
                        let u = next_unit(rng);
                        if *burst {
                            if u < p_busy {
                                // Reuse the draw: u / p_busy is uniform in [0, 1).
                                let r = u / p_busy;
                                let size = (r * 2.0 * TICK_BURST_MAX_TICKS).floor();
                                // 0..2·max → −max..−1 and 1..max.
                                *x += if size < TICK_BURST_MAX_TICKS {
                                    size - TICK_BURST_MAX_TICKS
                                } else {
                                    size - TICK_BURST_MAX_TICKS + 1.0
                                };
                            }
                            if next_unit(rng) < p_end {
                                *burst = false;
                            }
                        } else {
                            if u < p_quiet {
                                *x += if u < 0.5 * p_quiet { -1.0 } else { 1.0 };
                            }
                            if next_unit(rng) < p_start {
                                *burst = true;
                            }
                        }
                        (SYNTH_TICK_START + *x * SYNTH_TICK) as f32
                    }));
                }
            }
        }
        self.next_k = k1;
    }

    /// Skips to sample `k` (no earlier): appends one row of NaN values (a gap in every series)
    /// at the time of the first skipped sample, then continues at `k`. The walks and ticks go
    /// on from their last value.
    pub(super) fn skip_to(&mut self, k: u64, batch: &mut Batch) {
        if k <= self.next_k {
            return;
        }
        batch.ensure_columns(self.state.len());
        batch.times.push(self.time_of(self.next_k));
        for column in &mut batch.columns {
            column.push(f32::NAN);
        }
        self.next_k = k;
    }
}

pub(super) fn open_synthetic(
    kind: SynthKind,
    series: usize,
    rate_hz: f64,
    seed: u64,
    pacing: Pacing,
) -> Result<SeriesSource, SeriesError> {
    if series == 0 || series > 1024 {
        return Err(SeriesError::Synthetic(format!(
            "series count must be 1..=1024 (got {series})"
        )));
    }
    if !rate_hz.is_finite() || rate_hz <= 0.0 || rate_hz > 1.0e8 {
        return Err(SeriesError::Synthetic(format!(
            "rate must be a number of samples/s in (0, 1e8] (got {rate_hz})"
        )));
    }
    let (stem, one, many) = kind.words();
    let names = (0..series).map(|i| format!("{stem} {i}")).collect();
    let total = series as f64 * rate_hz;
    let label = format!(
        "synthetic: {series} {}, {total} samples/s",
        if series == 1 { one } else { many }
    );
    let synth = Synth::new(kind, series, rate_hz, seed);
    let inner = match pacing {
        Pacing::Driven => Inner::Driven(synth),
        Pacing::WallClock => {
            let (tx, rx) = RingBuffer::new(SYNTH_RING);
            let (recycle, recycled) = RingBuffer::new(SYNTH_RING);
            let stop = Arc::new(AtomicBool::new(false));
            let lost = Arc::new(AtomicU64::new(0));
            let (stop2, lost2) = (stop.clone(), lost.clone());
            let handle = std::thread::Builder::new()
                .name("vizdeck-series-synth".into())
                .spawn(move || run_synthetic(synth, tx, recycled, &stop2, &lost2))
                .map_err(|source| SeriesError::Spawn {
                    label: label.clone(),
                    source,
                })?;
            Inner::Thread {
                rx,
                recycle,
                stop,
                lost,
                handle: Some(handle),
            }
        }
    };
    let mut source = SeriesSource::empty(label, inner);
    source.names = names;
    source.clocked = true;
    Ok(source)
}

/// Longest the frame loop may leave the synthetic wall-clock source's batches untaken before
/// the generator holds, seconds. After such a stall of the consumer (a frame that took seconds,
/// a window that was not drawn) the generator resumes from the clock with a gap, instead of
/// handing over everything it owes in one frame: at most this much data waits in the ring.
pub(crate) const SYNTH_CONSUMER_STALL_S: f64 = 0.25;

/// Wall-clock producer: every ~1 ms, one [`Feed::pass`] on the clock since the start.
fn run_synthetic(
    synth: Synth,
    tx: Producer<Msg>,
    recycled: Consumer<Batch>,
    stop: &AtomicBool,
    lost: &AtomicU64,
) {
    let start = Instant::now();
    let mut feed = Feed::new(synth, tx, recycled);
    while !stop.load(Ordering::Relaxed) && !feed.tx.is_abandoned() {
        feed.pass(start.elapsed().as_secs_f64(), lost);
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What the wall-clock producer does on each pass (the clock passed in, so tests inject it).
///
/// - Its own stalls (the thread not scheduled): the backlog is released over several passes
///   by [`CatchUp::default`] (samples keep their times, at up to 4× the real rate).
/// - Stalls of the consumer (the frame loop does not take the batches): while the oldest batch
///   in the ring was pushed more than [`SYNTH_CONSUMER_STALL_S`] ago, nothing more is generated.
///   Once the ring is taken, generation resumes from the clock: the samples of the stall are
///   skipped, marked by one row of NaN values (a gap in every series) at the first skipped
///   sample's time. So the frame after a 5 s stall gets at most 0.25 s of data, not 5 s.
/// - A full ring (not normally reached) drops the batch, counted in `lost`.
struct Feed {
    synth: Synth,
    tx: Producer<Msg>,
    recycled: Consumer<Batch>,
    pace: CatchUp,
    /// When each batch still in the ring was pushed (clock seconds), oldest first.
    in_ring: VecDeque<f64>,
    /// The last pass held because the consumer stalled.
    holding: bool,
}

impl Feed {
    fn new(synth: Synth, tx: Producer<Msg>, recycled: Consumer<Batch>) -> Feed {
        Feed {
            synth,
            tx,
            recycled,
            pace: CatchUp::default(),
            in_ring: VecDeque::new(),
            holding: false,
        }
    }

    /// One pass at clock `now` (seconds since the start): generates and pushes what is due.
    fn pass(&mut self, now: f64, lost: &AtomicU64) {
        let released = self.pace.release_until(now);
        // Batches the consumer has taken since the last pass (the ring is first in, first out).
        let waiting = self.tx.buffer().capacity() - self.tx.slots();
        while self.in_ring.len() > waiting {
            self.in_ring.pop_front();
        }
        if self
            .in_ring
            .front()
            .is_some_and(|&pushed| now - pushed > SYNTH_CONSUMER_STALL_S)
        {
            self.holding = true;
            return;
        }
        let target = self.synth.count_before(released);
        if std::mem::take(&mut self.holding) && target > self.synth.next_k {
            // Resume from the clock: one gap row at the first skipped sample, the rest skipped.
            let mut batch = self.recycled.pop().unwrap_or_default();
            self.synth.skip_to(target, &mut batch);
            self.push(batch, now, lost);
        }
        while self.synth.next_k < target {
            let end = target.min(self.synth.next_k + SYNTH_MAX_BATCH_ROWS);
            let mut batch = self.recycled.pop().unwrap_or_default();
            self.synth.fill(end, &mut batch);
            self.push(batch, now, lost);
        }
    }

    fn push(&mut self, batch: Batch, now: f64, lost: &AtomicU64) {
        match self.tx.push(Msg::Batch(batch)) {
            Ok(()) => self.in_ring.push_back(now),
            Err(PushError::Full(Msg::Batch(b))) => {
                let n = self.synth.state.len() as u64;
                lost.fetch_add(b.times.len() as u64 * n, Ordering::Relaxed);
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The feed of one sine at 1024 samples/s (times k / 1024 s, exact in binary) and the ring's
    /// consumer side.
    fn feed() -> (Feed, Consumer<Msg>) {
        let (tx, rx) = RingBuffer::new(SYNTH_RING);
        let (_recycle, recycled) = RingBuffer::new(SYNTH_RING);
        let synth = Synth::new(SynthKind::Sines, 1, 1024.0, 1);
        (Feed::new(synth, tx, recycled), rx)
    }

    /// Takes every batch in the ring: the rows (time, value) in order.
    fn take(rx: &mut Consumer<Msg>) -> Vec<(f64, f32)> {
        let mut rows = Vec::new();
        while let Ok(msg) = rx.pop() {
            if let Msg::Batch(b) = msg {
                rows.extend(b.times.iter().copied().zip(b.columns[0].iter().copied()));
            }
        }
        rows
    }

    /// The sine's value at time `t`, as the closed form gives it.
    fn sine(t: f64) -> f32 {
        (std::f64::consts::TAU * SYNTH_SINE_BASE_HZ * t).sin() as f32
    }

    /// Passes every 1/1024 s (the injected clock), the consumer taking the ring every 16
    /// passes, except during a stall from 1 s to 6 s. The frame after the stall gets the 0.25 s
    /// generated before the generator held (257 samples: t = 1 s … 1.25 s), not 5 s; then a gap
    /// row at 1.25 + 1/1024 s and samples again from the clock (t > 6 s), none lost.
    #[test]
    fn a_consumer_stall_resumes_from_the_clock_with_a_gap() {
        let (mut feed, mut rx) = feed();
        let lost = AtomicU64::new(0);
        let mut got = Vec::new();
        for i in 1..=1024u32 {
            feed.pass(f64::from(i) / 1024.0, &lost);
            if i % 16 == 0 {
                got.extend(take(&mut rx));
            }
        }
        // Samples before the clock: k = 0 … 1023.
        assert_eq!(got.len(), 1024);
        // The stall: passes go on, nobody takes the ring.
        for i in 1025..=6144u32 {
            feed.pass(f64::from(i) / 1024.0, &lost);
        }
        let after_stall = take(&mut rx);
        // Pushed at 1025/1024 … 1281/1024 s (within 0.25 s of the first untaken batch):
        // samples k = 1024 … 1280.
        let want: Vec<f64> = (1024..=1280).map(|k| f64::from(k) / 1024.0).collect();
        assert_eq!(after_stall.iter().map(|r| r.0).collect::<Vec<_>>(), want);
        got.extend(after_stall);
        for i in 6145..=7168u32 {
            feed.pass(f64::from(i) / 1024.0, &lost);
            if i % 16 == 0 {
                got.extend(take(&mut rx));
            }
        }
        assert_eq!(lost.load(Ordering::Relaxed), 0);
        // 1024 + 257 samples, the gap row, then k = 6145 … 7167 (the clock read 6145/1024 s at
        // the first pass after the stall: samples before it skipped).
        assert_eq!(got.len(), 1024 + 257 + 1 + 1023);
        let (gap_t, gap_v) = got[1024 + 257];
        assert_eq!(gap_t, 1281.0 / 1024.0);
        assert!(gap_v.is_nan());
        let mut want: Vec<f64> = (0..=1280).map(|k| f64::from(k) / 1024.0).collect();
        want.push(1281.0 / 1024.0);
        want.extend((6145..=7167).map(|k| f64::from(k) / 1024.0));
        assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), want);
        for &(t, v) in got.iter().filter(|r| !r.1.is_nan()) {
            assert_eq!(v, sine(t), "t = {t}");
        }
    }

    /// A stall of the generator itself (its clock jumps 5 s while the consumer keeps taking)
    /// is caught up at up to 4× the real rate: the first pass releases 0.1 · 4 = 0.4 s, no gap.
    #[test]
    fn a_stall_of_the_generator_is_caught_up_without_a_gap() {
        let (mut feed, mut rx) = feed();
        let lost = AtomicU64::new(0);
        let mut taken = 0;
        for i in 1..=1024u32 {
            feed.pass(f64::from(i) / 1024.0, &lost);
            if i % 16 == 0 {
                taken += take(&mut rx).len();
            }
        }
        assert_eq!(taken, 1024);
        feed.pass(6.0, &lost);
        let rows = take(&mut rx);
        // Released up to 1 + 0.4 s: k = 1024 … 1433 (t < 1.4).
        assert_eq!(rows.len(), 1434 - 1024);
        assert!(rows.iter().all(|r| !r.1.is_nan()));
    }
}

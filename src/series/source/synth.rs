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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
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

/// Wall-clock producer: every ~1 ms, generates the samples whose time has passed (paced by
/// [`CatchUp::default`] after a stall) and pushes them.
/// When the ring is full (nobody drains) the samples are counted in `lost` and discarded.
fn run_synthetic(
    mut synth: Synth,
    mut tx: Producer<Msg>,
    mut recycled: Consumer<Batch>,
    stop: &AtomicBool,
    lost: &AtomicU64,
) {
    let start = Instant::now();
    let n = synth.state.len() as u64;
    let mut pace = CatchUp::default();
    while !stop.load(Ordering::Relaxed) && !tx.is_abandoned() {
        // After a stall of this thread the backlog is released over several passes.
        let target = synth.count_before(pace.release_until(start.elapsed().as_secs_f64()));
        while synth.next_k < target {
            let end = target.min(synth.next_k + SYNTH_MAX_BATCH_ROWS);
            let mut batch = recycled.pop().unwrap_or_default();
            synth.fill(end, &mut batch);
            if let Err(PushError::Full(Msg::Batch(b))) = tx.push(Msg::Batch(batch)) {
                lost.fetch_add(b.times.len() as u64 * n, Ordering::Relaxed);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

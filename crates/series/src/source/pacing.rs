//! How a source's samples are released in time: [`Pacing`] (a synthetic source on the wall
//! clock, or driven by the caller) and [`CatchUp`], which spreads a producer's backlog after a
//! stall over the next frames instead of one jump.

/// How a synthetic source advances time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pacing {
    /// A producer thread follows the wall clock (interactive use).
    #[default]
    WallClock,
    /// No thread: the caller's clock decides through [`SeriesSource::advance_to`](super::SeriesSource::advance_to) (headless runs,
    /// tests). A CSV source streams its file the same way under either pacing.
    Driven,
}

/// Paces the release of a producer's backlog after a stall. A producer that was held up (its
/// thread not scheduled, a frame that took seconds) would otherwise hand over everything it owes
/// at once, and the chart would jump by the whole stall in one frame. Instead, each step of the
/// clock releases at most `factor` times the step's length of source time, and a step is counted
/// as at most `max_step_s` long: while no backlog is owed (steps up to `max_step_s`, `factor ≥ 1`)
/// the release follows the clock exactly; after a stall the backlog is released over the next
/// steps at up to `factor` times the real rate, `factor − 1` times the step caught up per step,
/// until the release meets the clock again. Samples keep their own times; only when they are
/// handed over changes. Deterministic: a function of the clock values passed in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CatchUp {
    /// Longest clock step counted in full, seconds (longer ones are stalls).
    pub max_step_s: f64,
    /// Source time released per step, at most, as a multiple of the (capped) step.
    pub factor: f64,
    /// Source time released so far, seconds.
    released: f64,
    /// Clock at the previous step (`None`: the clock starts at 0).
    last_now: Option<f64>,
}

impl Default for CatchUp {
    /// Steps up to 0.1 s count in full; a backlog is released at up to 4× the real rate (3 s of
    /// backlog caught up per 1 s of clock, so a 5 s stall is made up in under 2 s).
    fn default() -> CatchUp {
        CatchUp::new(0.1, 4.0)
    }
}

impl CatchUp {
    /// A pacer for steps counted up to `max_step_s` seconds and release at up to `factor` times
    /// the real rate (non-finite or smaller values are raised to 1e-3 s and 1).
    pub fn new(max_step_s: f64, factor: f64) -> CatchUp {
        let sane = |x: f64, min: f64| if x.is_finite() { x.max(min) } else { min };
        CatchUp {
            max_step_s: sane(max_step_s, 1e-3),
            factor: sane(factor, 1.0),
            released: 0.0,
            last_now: None,
        }
    }

    /// The clock reads `now` seconds: returns the source time up to which samples may be
    /// released, `min(now, released + factor · min(step, max_step_s))` with `step` the clock's
    /// advance since the previous call (from 0 on the first). Never decreases; a clock that
    /// goes back or is not finite releases nothing more.
    pub fn release_until(&mut self, now: f64) -> f64 {
        if !now.is_finite() {
            return self.released;
        }
        let prev = self.last_now.unwrap_or(0.0);
        let step = (now - prev).max(0.0);
        self.last_now = Some(now.max(prev));
        let budget = self.factor * step.min(self.max_step_s);
        self.released = (self.released + budget).min(now).max(self.released);
        self.released
    }

    /// Source time owed but not yet released at the last clock reading, seconds.
    pub fn backlog_s(&self) -> f64 {
        (self.last_now.unwrap_or(0.0) - self.released).max(0.0)
    }
}

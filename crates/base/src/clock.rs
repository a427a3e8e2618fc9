//! Fixed-timestep clock: real elapsed time feeds an accumulator that is spent in steps of `dt`;
//! at most `max_steps` run per frame and any time beyond that is dropped (and counted), so a stall
//! never causes a burst of simulation. The leftover fraction gives the interpolation alpha.
//!
//! Source: Glenn Fiedler, "Fix Your Timestep!" (2004).

/// Simulation step: 1/120 s.
pub const DT: f64 = 1.0 / 120.0;
/// Most steps run in one frame.
pub const MAX_STEPS: u32 = 8;
/// Tolerance for floating-point accumulation (1 ns), so that 1/60 s of input gives exactly 2 steps.
const EPS: f64 = 1e-9;

/// What one frame of the clock produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tick {
    /// Fixed steps to run this frame (0..=max_steps).
    pub steps: u32,
    /// Whole steps' worth of time dropped this frame because of the step cap.
    pub dropped_steps: u32,
    /// Seconds of simulation time this frame advances: `steps × dt`.
    pub advanced_s: f64,
    /// Interpolation alpha in [0, 1): leftover accumulator / dt.
    pub alpha: f32,
}

/// The accumulator clock.
#[derive(Clone, Debug)]
pub struct FixedClock {
    dt: f64,
    max_steps: u32,
    accumulator: f64,
    sim_time: f64,
    total_steps: u64,
    total_dropped: u64,
}

impl Default for FixedClock {
    fn default() -> Self {
        FixedClock::new(DT, MAX_STEPS)
    }
}

impl FixedClock {
    /// A clock with step `dt` seconds (> 0) and at most `max_steps` steps per frame.
    pub fn new(dt: f64, max_steps: u32) -> FixedClock {
        FixedClock {
            dt,
            max_steps,
            accumulator: 0.0,
            sim_time: 0.0,
            total_steps: 0,
            total_dropped: 0,
        }
    }

    /// Feeds `elapsed_s` seconds of real (or simulated) time and returns the steps to run.
    /// Negative or non-finite input counts as 0.
    pub fn tick(&mut self, elapsed_s: f64) -> Tick {
        let elapsed = if elapsed_s.is_finite() && elapsed_s > 0.0 {
            elapsed_s
        } else {
            0.0
        };
        self.accumulator += elapsed;
        let mut steps = 0;
        while self.accumulator + EPS >= self.dt && steps < self.max_steps {
            self.accumulator = (self.accumulator - self.dt).max(0.0);
            steps += 1;
        }
        let mut dropped = 0;
        if self.accumulator + EPS >= self.dt {
            // Step cap reached: drop whole steps, keep the fraction for the alpha.
            let whole = ((self.accumulator + EPS) / self.dt).floor();
            dropped = whole as u32;
            self.accumulator = (self.accumulator - whole * self.dt).max(0.0);
        }
        self.total_steps += steps as u64;
        self.total_dropped += dropped as u64;
        let advanced_s = steps as f64 * self.dt;
        self.sim_time += advanced_s;
        Tick {
            steps,
            dropped_steps: dropped,
            advanced_s,
            alpha: (self.accumulator / self.dt).clamp(0.0, 0.999_999) as f32,
        }
    }

    /// Step length in seconds.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Simulation time so far: total steps × dt.
    pub fn sim_time(&self) -> f64 {
        self.sim_time
    }

    /// Steps run since creation.
    pub fn total_steps(&self) -> u64 {
        self.total_steps
    }

    /// Steps dropped by the cap since creation.
    pub fn total_dropped(&self) -> u64 {
        self.total_dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixtieth_of_a_second_is_two_steps() {
        let mut c = FixedClock::default();
        for _ in 0..600 {
            let t = c.tick(1.0 / 60.0);
            assert_eq!((t.steps, t.dropped_steps), (2, 0));
        }
        assert_eq!(c.total_steps(), 1200);
        assert!((c.sim_time() - 10.0).abs() < 1e-9);
    }

    #[test]
    fn stall_runs_at_most_the_cap_and_counts_the_rest() {
        let mut c = FixedClock::default();
        let t = c.tick(5.0); // 600 steps' worth
        assert_eq!(t.steps, MAX_STEPS);
        assert_eq!(t.dropped_steps, 600 - MAX_STEPS);
        assert_eq!(c.tick(0.0).steps, 0);
    }

    #[test]
    fn alpha_is_the_leftover_fraction() {
        let mut c = FixedClock::default();
        let t = c.tick(DT * 2.5);
        assert_eq!(t.steps, 2);
        assert!((t.alpha - 0.5).abs() < 1e-6);
        assert_eq!(c.tick(f64::NAN).steps, 0);
        assert_eq!(c.tick(-1.0).steps, 0);
    }
}

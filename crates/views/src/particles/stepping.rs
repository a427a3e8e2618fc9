//! Fixed steps: the simulation rate ([`StepRate`]), the clock ticks per step and the slow-frame
//! cap ([`StepClock`]), and the parameters of each step ([`StepParams`], from the controls and
//! [`StepInputs`]).

use glam::Vec3;

use super::Particles;
use super::cpu::{SplitMix64, StepParams, attractors_at};

/// With [`StepRate::Auto`] on a CPU adapter, a frame that took longer than this (seconds) makes
/// the next one run at most one step: the simulation then runs slower than real time instead of
/// each frame catching up with more steps and taking longer still (the fixed-timestep spiral:
/// 1,048,576 particles in a window on lavapipe ran at 4.2 FPS with up to 4 steps a frame).
pub const SLOW_FRAME_S: f64 = 1.0 / 30.0;

/// Simulation rate: fixed steps per second (`--particle-rate`, side panel). The deck's clock
/// ticks at 120 Hz ([`crate::clock::DT`]); at 60 Hz the scene runs one step of 2·dt every second
/// tick and renders with the interpolation alpha of its own step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum StepRate {
    /// 60 Hz on a CPU adapter (lavapipe: every step is a pass over all particles
    /// on the CPU, 4.9 ms at 131,072 and 43 ms at 1,048,576 on the 2-core project machine),
    /// 120 Hz elsewhere.
    #[default]
    Auto,
    /// 120 steps per second (dt = 1/120 s).
    #[value(name = "120")]
    Hz120,
    /// 60 steps per second (dt = 1/60 s).
    #[value(name = "60")]
    Hz60,
}

impl StepRate {
    /// Clock ticks per simulation step on an adapter that is (`cpu`) or is not a CPU adapter:
    /// 1 (120 Hz) or 2 (60 Hz).
    pub fn ticks_per_step(self, cpu: bool) -> u32 {
        match self {
            StepRate::Hz120 => 1,
            StepRate::Hz60 => 2,
            StepRate::Auto if cpu => 2,
            StepRate::Auto => 1,
        }
    }
}
/// The fixed-step clock of the scene.
pub(super) struct StepClock {
    /// Simulation rate asked for.
    pub(super) step_rate: StepRate,
    /// Whether the adapter is a CPU one (what `Auto` means).
    pub(super) cpu_adapter: bool,
    /// The clock ticks since the last step (0 or 1 at 60 Hz).
    pub(super) ticks_pending: u32,
    /// The last frame took longer than [`SLOW_FRAME_S`] (see there).
    pub(super) slow_frame: bool,
    /// The clock ticks dropped so far because of a slow frame.
    pub(super) ticks_dropped_slow: u64,
}

/// What [`Particles::next_params`] derives a step from besides the controls and the simulation
/// time, and advances.
pub(super) struct StepInputs {
    /// Steps made so far (seeds each step's emission).
    pub(super) step_index: u64,
    /// Where the emitter ring writes next.
    pub(super) emit_start: u32,
    /// Fraction of a particle left to emit.
    pub(super) emit_carry: f32,
    /// Burst particles queued for the next step.
    pub(super) burst_pending: u32,
    /// Phases of the curl noise at time 0 (seeded).
    pub(super) curl_base: [f32; 6],
}

impl Particles {
    /// Sets the simulation rate (takes effect at the next clock tick).
    pub fn set_step_rate(&mut self, rate: StepRate) {
        self.clock.step_rate = rate;
        if self.clock.ticks_pending >= self.ticks_per_step() {
            self.clock.ticks_pending = 0;
        }
    }

    /// The simulation rate asked for.
    pub fn step_rate(&self) -> StepRate {
        self.clock.step_rate
    }

    /// Clock ticks per simulation step on this adapter (1: 120 Hz, 2: 60 Hz).
    pub fn ticks_per_step(&self) -> u32 {
        self.clock.step_rate.ticks_per_step(self.clock.cpu_adapter)
    }

    /// Whether this frame runs at most one step: [`StepRate::Auto`] on a CPU adapter after a
    /// frame slower than [`SLOW_FRAME_S`].
    pub fn one_step_cap(&self) -> bool {
        self.clock.step_rate == StepRate::Auto && self.clock.cpu_adapter && self.clock.slow_frame
    }

    /// Simulation steps per second on this adapter.
    pub fn steps_per_second(&self) -> f64 {
        1.0 / (crate::clock::DT * self.ticks_per_step() as f64)
    }

    /// The interpolation alpha between the last two simulation states for the clock's alpha
    /// `clock_alpha` (fraction of a clock tick): (ticks since the last step + clock alpha) /
    /// ticks per step, in [0, 1).
    pub fn step_alpha(&self, clock_alpha: f32) -> f32 {
        if self.paused {
            return 1.0;
        }
        let k = self.ticks_per_step() as f32;
        ((self.clock.ticks_pending as f32 + clock_alpha) / k).clamp(0.0, 1.0)
    }

    /// One clock tick ([`Scene::fixed_update`](crate::Scene::fixed_update)): queues a
    /// step every [`Particles::ticks_per_step`] ticks, none while paused, following or drawing a
    /// `--share` producer, at most one after a slow frame ([`Particles::one_step_cap`]).
    pub(super) fn fixed_step(&mut self, dt: f32) {
        if self.share.following || self.shared.is_some() {
            // A follower steps only as the publisher's messages say (`prepare`).
            return;
        }
        if self.paused || self.frame_params.len() >= crate::clock::MAX_STEPS as usize {
            return;
        }
        if self.one_step_cap() && !self.frame_params.is_empty() {
            self.clock.ticks_dropped_slow += 1;
            return;
        }
        let k = self.ticks_per_step();
        self.clock.ticks_pending += 1;
        if self.clock.ticks_pending < k {
            return;
        }
        self.clock.ticks_pending = 0;
        let p = self.next_params(dt * k as f32);
        self.frame_params.push(p);
    }

    /// Parameters of the next step (advances the emitter ring and the clock).
    pub(super) fn next_params(&mut self, dt: f32) -> StepParams {
        let c = &self.controls;
        let n = self.sim.count();
        let mut emit = 0u32;
        if n > 0 {
            self.inputs.emit_carry += c.emit_rate.max(0.0) * dt;
            let whole = self.inputs.emit_carry.floor();
            self.inputs.emit_carry -= whole;
            emit = (whole.min(n as f32) as u32)
                .saturating_add(std::mem::take(&mut self.inputs.burst_pending))
                .min(n);
        }
        let emit_start = self.inputs.emit_start;
        if n > 0 {
            self.inputs.emit_start =
                ((self.inputs.emit_start as u64 + emit as u64) % n as u64) as u32;
        }
        let seed =
            SplitMix64(self.seed ^ self.inputs.step_index.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .next_u64();
        let t = self.sim_time;
        let tau = std::f32::consts::TAU;
        let ph = |i: usize, w: f32| (self.inputs.curl_base[i] + w * t).rem_euclid(tau);
        let mut attractors = attractors_at(t);
        if !c.attractors {
            for a in &mut attractors {
                a[3] = 0.0;
            }
        }
        let (mouse_pos, mouse_s) = self.mouse.unwrap_or((Vec3::ZERO, 0.0));
        let p = StepParams {
            attractors,
            gravity_drag: [0.0, -c.gravity, 0.0, c.drag],
            mouse: [mouse_pos.x, mouse_pos.y, mouse_pos.z, mouse_s],
            curl_a: [ph(0, 0.31), ph(1, -0.27), ph(2, 0.23), ph(3, -0.19)],
            curl_b: [ph(4, 0.17), ph(5, -0.13), c.curl_strength, c.curl_frequency],
            emitter: [1.2, 0.0, 0.0, c.emit_speed],
            emit_dir: [0.0, 0.0, 1.0, c.emit_spread],
            dt,
            softening: 0.02,
            emit_start,
            emit_count: emit,
            emit_seed: (seed >> 32) as u32,
            lifetime: c.lifetime,
            cohesion: c.cohesion,
            alignment: c.alignment,
            separation: c.separation,
            mouse_softening: 0.05,
            _pad: [0.0; 2],
        };
        self.sim_time += dt;
        self.inputs.step_index += 1;
        p
    }
}

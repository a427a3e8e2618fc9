//! The particles under `--publish` and `--follow` (the `vizdeck-protocols` crate's `publish`). The simulation is
//! deterministic given its inputs, so what travels is its inputs, not its state:
//!
//! - **Delta** (one per publisher frame that ran steps, [`ParticlesDelta`]): that frame's
//!   steps' [`StepParams`], verbatim (208 bytes each; a one-step delta is 379 bytes on the
//!   wire, 22 KiB/s at 60 steps a second), whether the publisher reduced its statistics after
//!   them, the flocking radius and speed cap when they changed, and a restart from the seed
//!   (count, mode, seed) when the simulation restarted (another count or mode, a lost device). A follower runs exactly those steps,
//!   never its own clock's, so its state equals the publisher's step for step (same adapter:
//!   to the bit).
//! - **Keyframe** ([`ParticlesKeyframe`]): the configuration and the state at a step. Before
//!   the first step of a configuration the state is the seeded initial state, which the
//!   follower makes itself (a keyframe of a few hundred bytes). Later the state is read back
//!   from the GPU through the deck's readback ring (`count` × 32 bytes: 4 MiB at the default
//!   131,072 particles, 3.0–3.2 MiB after the protocol's zstd (the low mantissa bytes do not
//!   compress; byte planes would save another 14%), every
//!   the publisher's `KEYFRAME_EVERY_S` = 2 s, so about
//!   1.6 MiB/s on the wire: measured on lavapipe, 13.2 MB in a 10 s run with 4 state
//!   keyframes), 1–3 frames after it was asked for; the keyframe then carries the
//!   state, its step, and every frame the publisher ran since (sent as deltas too), so a
//!   follower that joins late uploads the state and runs those frames, and is at the
//!   publisher's step. A follower already in step keeps its state and skips what it has.
//!   States over [`KEY_MAX_STATE_BYTES`] (over 1,572,864 particles) are not sent: such a
//!   keyframe says so and a follower can only start from the publisher's next restart.
//!
//! A follower's frame runs whole publisher frames, at most [`crate::clock::MAX_STEPS`] steps,
//! and ends after a frame the publisher reduced its statistics after, reducing there too: the
//! two report kinetic energies of the same steps
//! ([`Sim::stats_history`](super::sim::Sim::stats_history)).

use std::collections::VecDeque;

use super::cpu::StepParams;
use super::render::{ColorBy, Style};
use super::sim::{self, Mode};
use super::{Particles, clamp_count};
use crate::gpu::frame::GpuFrame;
use vizdeck_protocols::publish::{
    Body, Bytes, PARTICLE_BYTES, ParticleConfig, ParticleFrame, ParticlesDelta, ParticlesKeyframe,
    ParticlesView, STEP_PARAMS_BYTES,
};

const _: () = assert!(std::mem::size_of::<StepParams>() == STEP_PARAMS_BYTES);
const _: () = assert!(std::mem::size_of::<super::cpu::Particle>() == PARTICLE_BYTES);

/// Largest state a keyframe carries, bytes (48 MiB: 1,572,864 particles; a message holds at
/// most [`MAX_BODY`](vizdeck_protocols::publish::MAX_BODY) = 64 MiB).
pub(crate) const KEY_MAX_STATE_BYTES: u64 = 48 << 20;

/// Steps a follower holds before running them (10 s at 60 steps a second); past this it has
/// fallen behind and waits for the next keyframe.
pub(crate) const MAX_QUEUED_STEPS: usize = 600;

/// Publisher frames after a state copy was asked for before it is given up (asked again).
const COPY_GIVE_UP_FRAMES: usize = 60;

/// Payload of a state readback: which copy it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct StateCopy {
    /// The request's number.
    pub id: u64,
}

/// A state copy in flight.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    id: u64,
    epoch: u64,
    step: u64,
    flocking: (f32, f32),
    sim_time: f32,
}

/// A state that came back, waiting for the next publish.
struct KeyState {
    epoch: u64,
    step: u64,
    flocking: (f32, f32),
    sim_time: f32,
    bytes: Vec<u8>,
}

/// What a follower runs at the start of one of its frames, then the steps.
#[derive(Debug, Default)]
struct Planned {
    /// Rebuild from the seed first.
    restart: Option<(u32, Mode, u64)>,
    /// Then upload this state as the state after step `.1`, at sim time `.2`.
    upload: Option<(Vec<u8>, u64, f32)>,
    /// Then set the flocking radius and speed cap.
    flocking: Option<(f32, f32)>,
    /// The publisher's frame's steps.
    params: Vec<StepParams>,
    /// Reduce the statistics after them.
    stats: bool,
}

impl Planned {
    /// Whether it must start a follower frame (it changes what the steps before it ran with).
    fn starts_frame(&self) -> bool {
        self.restart.is_some() || self.upload.is_some() || self.flocking.is_some()
    }
}

/// The scene's publish and follow state (kept across [`Particles::reconfigure`]).
#[derive(Default)]
pub struct Share {
    /// Following: the scene steps only as the publisher's messages say.
    pub following: bool,
    /// The configuration number: +1 at each restart from the seed.
    pub(super) epoch: u64,
    /// Copies the scene made asked the ring to drop (a restart, an uploaded state).
    pub(super) invalidate: bool,
    // Publishing.
    published_epoch: Option<u64>,
    published_flocking: Option<(f32, f32)>,
    /// The view last sent.
    published_view: Option<ParticlesView>,
    copy_wanted: bool,
    next_copy_id: u64,
    in_flight: Option<InFlight>,
    key_state: Option<KeyState>,
    /// Frames published since the state copy in flight (they go into its keyframe).
    log: Vec<ParticleFrame>,
    keys_seed: u64,
    keys_state: u64,
    keys_without_state: u64,
    copies_refused: u64,
    // Following.
    /// (publisher, its configuration number) the scene follows.
    followed: Option<(u64, u64)>,
    /// The follower's state is the publisher's at `received` once the queue has run.
    synced: bool,
    /// The publisher's step count after the last frame queued.
    received: u64,
    /// (count asked, mode, seed) the follower's simulation was last built with.
    built: Option<(u32, Mode, u64)>,
    queue: VecDeque<Planned>,
    queued_steps: usize,
    frames_run: u64,
    keys_used: u64,
    uploads: u64,
    restarts: u64,
    resyncs: u64,
    /// Why the follower is not in step, or what it had to change (one line).
    pub notice: Option<String>,
}

impl Share {
    /// A message of configuration `epoch` was sent, with these flocking constants when they
    /// changed.
    fn published(&mut self, epoch: u64, flocking: Option<(f32, f32)>) {
        self.published_epoch = Some(epoch);
        if flocking.is_some() {
            self.published_flocking = flocking;
        }
    }

    /// The follower's state was lost (a lost device): out of step until the next keyframe.
    pub(super) fn lost_state(&mut self) {
        self.synced = false;
        self.queue.clear();
        self.queued_steps = 0;
        self.built = None;
        self.notice =
            Some("the GPU device was lost: waiting for the publisher's next keyframe".into());
    }
}

/// The step parameters of `bytes` ([`STEP_PARAMS_BYTES`] each; a partial tail is ignored).
fn params_of(bytes: &[u8]) -> Vec<StepParams> {
    bytes
        .chunks_exact(STEP_PARAMS_BYTES)
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

/// The mode named `name` (`None`: unknown).
fn mode_of(name: &str) -> Option<Mode> {
    Mode::ALL.into_iter().find(|m| m.name() == name)
}

impl Particles {
    /// The configuration (epoch `epoch`, `count` particles in `mode`) as sent.
    fn config(&self, epoch: u64, count: u32, mode: Mode) -> ParticleConfig {
        ParticleConfig {
            epoch,
            count,
            mode: mode.name().to_string(),
            seed: self.seed,
        }
    }

    /// [`Scene::publish`](crate::Scene::publish) for the particles: called after the
    /// frame's clock ticks queued its steps and before `prepare` runs them.
    /// The view as a follower would show it (yaw 0 while auto-rotating: it follows the
    /// simulated time on both sides).
    fn view_state(&self) -> ParticlesView {
        let c = &self.camera;
        ParticlesView {
            target: c.target.to_array(),
            distance: c.distance,
            yaw: if self.auto_rotate { 0.0 } else { c.yaw },
            pitch: c.pitch,
            fov_y: c.fov_y,
            auto_rotate: self.auto_rotate,
            color_by: match self.color_by {
                ColorBy::Speed => "speed",
                ColorBy::Density => "density",
                ColorBy::Age => "age",
            }
            .into(),
            sprite_size: self.sprite_size,
            style: match self.renderer.style {
                Style::Auto => "auto",
                Style::Sprites => "sprites",
                Style::Splat => "splat",
                Style::Opaque => "opaque",
            }
            .into(),
        }
    }

    /// The view for the report (what [`publish_body`](Self::publish_body) sends).
    pub(super) fn view_metrics(&self) -> serde_json::Value {
        serde_json::to_value(self.view_state()).unwrap_or_default()
    }

    /// Shows the publisher's view (an attached follower).
    pub(super) fn apply_view(&mut self, v: &ParticlesView) {
        self.camera.target = glam::Vec3::from_array(v.target);
        self.camera.distance = v.distance;
        self.camera.pitch = v.pitch;
        self.camera.fov_y = v.fov_y;
        self.auto_rotate = v.auto_rotate;
        if !v.auto_rotate {
            self.camera.yaw = v.yaw;
        }
        self.sprite_size = v.sprite_size;
        match v.color_by.as_str() {
            "speed" => self.set_color_by(ColorBy::Speed),
            "density" => self.set_color_by(ColorBy::Density),
            "age" => self.set_color_by(ColorBy::Age),
            _ => {}
        }
        match v.style.as_str() {
            "auto" => self.set_draw_style(Style::Auto),
            "sprites" => self.set_draw_style(Style::Sprites),
            "splat" => self.set_draw_style(Style::Splat),
            "opaque" => self.set_draw_style(Style::Opaque),
            _ => {}
        }
    }

    /// [`Scene::publish`](crate::Scene::publish) for the particles: the simulation's
    /// message ([`publish_sim`](Self::publish_sim)) with the view, in every keyframe and in a
    /// delta when it changed (a delta of no steps when only the view changed).
    pub(super) fn publish_body(&mut self, keyframe: bool) -> Option<Body> {
        if self.share.following {
            return None;
        }
        let view = self.view_state();
        let changed = self.share.published_view.as_ref() != Some(&view);
        let body = match self.publish_sim(keyframe) {
            Some(Body::ParticlesKey(mut k)) => {
                k.view = Some(view.clone());
                Body::ParticlesKey(k)
            }
            Some(Body::ParticlesDelta(mut d)) => {
                d.view = changed.then(|| view.clone());
                Body::ParticlesDelta(d)
            }
            Some(other) => other,
            None if changed => Body::ParticlesDelta(ParticlesDelta {
                restart: None,
                frame: ParticleFrame {
                    step: self.sim.steps_total(),
                    flocking: None,
                    params: Bytes(Vec::new()),
                    stats: false,
                },
                view: Some(view.clone()),
            }),
            None => return None,
        };
        self.share.published_view = Some(view);
        Some(body)
    }

    fn publish_sim(&mut self, keyframe: bool) -> Option<Body> {
        if self.share.following {
            // A follower does not republish (its frames are the publisher's).
            return None;
        }
        // What this frame's prepare will do: rebuild (dropping the frame's steps), set the
        // flocking constants, run the steps.
        let restart = self
            .panel
            .rebuild
            .map(|(count, mode)| (clamp_count(&self.limits, mode, count).0, mode));
        let sh = &mut self.share;
        let epoch = if restart.is_some() {
            sh.epoch + 1
        } else {
            sh.epoch
        };
        if restart.is_some() {
            sh.published_flocking = None;
            sh.in_flight = None;
            sh.key_state = None;
            sh.log.clear();
        }
        let flocking_now = (self.controls.radius, self.controls.max_speed);
        let (params, step, flocking, stats) = match restart {
            Some(_) => (Vec::new(), 0, None, true),
            None => {
                let mut params = Vec::with_capacity(self.frame_params.len() * STEP_PARAMS_BYTES);
                for p in &self.frame_params {
                    params.extend_from_slice(bytemuck::bytes_of(p));
                }
                let changed = sh.published_flocking != Some(flocking_now);
                (
                    params,
                    self.sim.steps_total(),
                    changed.then_some(flocking_now),
                    self.sim.stats_due(),
                )
            }
        };
        let frame = ParticleFrame {
            step,
            flocking,
            params: Bytes(params),
            stats,
        };
        if let Some(f) = &sh.in_flight {
            if sh.log.len() >= COPY_GIVE_UP_FRAMES || f.epoch != epoch {
                // The copy did not come back (or no longer applies): ask again.
                sh.in_flight = None;
                sh.log.clear();
                sh.copy_wanted = true;
            } else {
                sh.log.push(frame.clone());
            }
        } else if sh.key_state.is_some() {
            sh.log.push(frame.clone());
        }
        let (count, mode) = restart.unwrap_or((self.sim.count(), self.mode));
        let config = self.config(epoch, count, mode);
        let sh = &mut self.share;
        let restarted = sh.published_epoch != Some(epoch);
        // A state that came back: the keyframe of that step and the frames since.
        if let Some(k) = sh.key_state.take()
            && k.epoch == epoch
            && sh.log.first().is_some_and(|f| f.step == k.step)
        {
            sh.keys_state += 1;
            sh.published(epoch, flocking.is_some().then_some(flocking_now));
            return Some(Body::ParticlesKey(ParticlesKeyframe {
                view: None,
                config,
                step: k.step,
                flocking: k.flocking,
                sim_time_s: k.sim_time,
                state: Some(Bytes(k.bytes)),
                frames: std::mem::take(&mut sh.log),
            }));
        }
        if sh.in_flight.is_none() {
            sh.log.clear();
        }
        if keyframe && (restart.is_some() || self.sim.steps_total() == 0) {
            // The state is the seeded initial one: the follower makes it itself.
            let sh = &mut self.share;
            sh.keys_seed += 1;
            sh.published(epoch, flocking.is_some().then_some(flocking_now));
            sh.copy_wanted = false;
            // The constants the (re)built simulation starts with.
            let initial = match restart {
                Some((count, _)) => {
                    let c = sim::SimConfig::new(count, mode, self.seed);
                    (sim::default_radius(count), c.max_speed)
                }
                None => (self.sim.consts().radius, self.sim.consts().max_speed),
            };
            return Some(Body::ParticlesKey(ParticlesKeyframe {
                view: None,
                config,
                step: 0,
                flocking: initial,
                sim_time_s: 0.0,
                state: None,
                frames: vec![frame],
            }));
        }
        let sh = &mut self.share;
        if keyframe && sh.in_flight.is_none() {
            if self.sim.state_bytes() > KEY_MAX_STATE_BYTES {
                // Too large to carry: a keyframe without state (followers say so).
                sh.keys_without_state += 1;
                sh.published(epoch, flocking.is_some().then_some(flocking_now));
                return Some(Body::ParticlesKey(ParticlesKeyframe {
                    view: None,
                    config,
                    step,
                    flocking: (self.sim.consts().radius, self.sim.consts().max_speed),
                    sim_time_s: self.sim_time,
                    state: None,
                    frames: vec![frame],
                }));
            }
            // Read the state back after this frame's steps; the keyframe goes when it arrives.
            sh.copy_wanted = true;
        }
        if frame.params.0.is_empty() && frame.flocking.is_none() && !restarted {
            return None;
        }
        sh.published(epoch, flocking.is_some().then_some(flocking_now));
        Some(Body::ParticlesDelta(ParticlesDelta {
            view: None,
            restart: restarted.then_some(config),
            frame,
        }))
    }

    /// After the frame's passes: the state copy a keyframe waits for, into the ring.
    pub(super) fn record_state_copy(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        ring: &mut crate::gpu::readback::ReadbackRing,
        me: crate::gpu::readback::Consumer,
    ) {
        if !self.share.copy_wanted || self.share.in_flight.is_some() {
            return;
        }
        let id = self.share.next_copy_id;
        if self
            .sim
            .record_state_copy(device, encoder, ring, me, StateCopy { id })
        {
            self.share.next_copy_id += 1;
            self.share.copy_wanted = false;
            self.share.log.clear();
            self.share.in_flight = Some(InFlight {
                id,
                epoch: self.share.epoch,
                step: self.sim.steps_total(),
                flocking: (self.sim.consts().radius, self.sim.consts().max_speed),
                sim_time: self.sim_time,
            });
        } else {
            // The ring is busy: asked again next frame.
            self.share.copies_refused += 1;
        }
    }

    /// A state copy came back: kept for the next publish (when it is the one waited for and
    /// the simulation has not restarted since).
    pub(super) fn state_arrived(&mut self, copy: StateCopy, data: &[u8]) {
        let sh = &mut self.share;
        let Some(f) = sh.in_flight else { return };
        if f.id != copy.id {
            return;
        }
        sh.in_flight = None;
        if f.epoch != sh.epoch || data.len() as u64 != self.sim.state_bytes() {
            sh.log.clear();
            sh.copy_wanted = true;
            return;
        }
        sh.key_state = Some(KeyState {
            epoch: f.epoch,
            step: f.step,
            flocking: f.flocking,
            sim_time: f.sim_time,
            bytes: data.to_vec(),
        });
    }

    /// [`Scene::follow`](crate::Scene::follow) for the particles: queues what the
    /// publisher ran; [`Particles::follow_plan`] runs it in the next frames.
    pub(super) fn follow_body(&mut self, publisher: u64, body: Body) {
        match body {
            Body::ParticlesKey(k) => self.follow_key(publisher, k),
            Body::ParticlesDelta(d) => self.follow_delta(publisher, d),
            _ => {}
        }
    }

    fn follow_key(&mut self, publisher: u64, k: ParticlesKeyframe) {
        let Some(mode) = mode_of(&k.config.mode) else {
            return;
        };
        let sh = &mut self.share;
        if sh.synced && sh.followed == Some((publisher, k.config.epoch)) && sh.received >= k.step {
            // In step already: only the frames not had yet.
            let mut ok = true;
            for f in &k.frames {
                let end = f.step + (f.params.0.len() / STEP_PARAMS_BYTES) as u64;
                if end <= sh.received && !(f.params.0.is_empty() && f.step == sh.received) {
                    continue;
                }
                if !sh.queue_frame(f.clone()) {
                    ok = false;
                    break;
                }
            }
            if ok {
                return;
            }
        }
        let sh = &mut self.share;
        sh.queue.clear();
        sh.queued_steps = 0;
        let cfg = (k.config.count, mode, k.config.seed);
        let mut first = Planned {
            flocking: Some(k.flocking),
            ..Planned::default()
        };
        match k.state {
            None if k.step > 0 => {
                sh.synced = false;
                sh.notice = Some(format!(
                    "the publisher's {} particles are too large for a keyframe ({} MiB): \
                     following from its next restart",
                    k.config.count,
                    (k.config.count as u64 * PARTICLE_BYTES as u64) >> 20
                ));
                return;
            }
            None => first.restart = Some(cfg),
            Some(state) => {
                if sh.built != Some(cfg) {
                    first.restart = Some(cfg);
                }
                first.upload = Some((state.0, k.step, k.sim_time_s));
            }
        }
        sh.keys_used += 1;
        sh.followed = Some((publisher, k.config.epoch));
        sh.synced = true;
        sh.received = k.step;
        sh.notice = None;
        sh.queue.push_back(first);
        for f in k.frames {
            if !sh.queue_frame(f) {
                break;
            }
        }
    }

    fn follow_delta(&mut self, publisher: u64, d: ParticlesDelta) {
        let sh = &mut self.share;
        let in_step = sh.synced && sh.followed.map(|f| f.0) == Some(publisher);
        if let Some(c) = d.restart {
            // The publisher restarted from its seed: a follower can start here too.
            let Some(mode) = mode_of(&c.mode) else {
                return;
            };
            if !in_step {
                sh.queue.clear();
                sh.queued_steps = 0;
            }
            sh.followed = Some((publisher, c.epoch));
            sh.synced = true;
            sh.received = 0;
            sh.restarts += 1;
            sh.notice = None;
            sh.queue.push_back(Planned {
                restart: Some((c.count, mode, c.seed)),
                ..Planned::default()
            });
        } else if !in_step {
            // Waiting for a keyframe.
            return;
        }
        sh.queue_frame(d.frame);
    }
}

impl Share {
    /// Queues one publisher frame after what is queued; false (and out of step until the next
    /// keyframe) when it does not follow on from the last one, or the follower fell behind.
    fn queue_frame(&mut self, f: ParticleFrame) -> bool {
        let sh = self;
        if f.step != sh.received {
            sh.synced = false;
            sh.resyncs += 1;
            sh.notice = Some(format!(
                "out of step with the publisher (its step {} after our {}): waiting for its \
                 next keyframe",
                f.step, sh.received
            ));
            return false;
        }
        let params = params_of(&f.params.0);
        sh.received += params.len() as u64;
        sh.queued_steps += params.len();
        let planned = Planned {
            flocking: f.flocking,
            params,
            stats: f.stats,
            ..Planned::default()
        };
        match sh.queue.back_mut() {
            // Nothing ran after the last item's start (a restart, an upload, constants): this
            // frame's constants and steps follow on in the same follower frame.
            Some(last) if last.params.is_empty() && !last.stats => {
                last.flocking = planned.flocking.or(last.flocking);
                last.params = planned.params;
                last.stats = planned.stats;
            }
            _ => sh.queue.push_back(planned),
        }
        if sh.queued_steps > MAX_QUEUED_STEPS {
            sh.queue.clear();
            sh.queued_steps = 0;
            sh.synced = false;
            sh.resyncs += 1;
            sh.notice = Some(format!(
                "fell {MAX_QUEUED_STEPS} steps behind the publisher: waiting for its next \
                 keyframe"
            ));
            return false;
        }
        true
    }
}

impl Particles {
    /// A follower's `prepare`: runs the start of the next queued frame (restart, state upload,
    /// flocking constants) and sets the frame's steps: whole publisher frames, at most
    /// [`crate::clock::MAX_STEPS`] steps, ending after one the publisher reduced after.
    /// Returns whether to reduce the statistics this frame.
    pub(super) fn follow_plan(&mut self, gpu: &mut GpuFrame<'_>) -> bool {
        self.frame_params.clear();
        let Some(first) = self.share.queue.pop_front() else {
            return false;
        };
        if let Some((count, mode, seed)) = first.restart {
            self.seed = seed;
            self.reconfigure(gpu.gpu(), count, mode);
            self.share.built = Some((count, mode, seed));
            if let Some(n) = self.sim.notice() {
                self.share.notice = Some(format!(
                    "{n}: the follower runs the first {} of the publisher's particles, its \
                     statistics differ",
                    self.sim.count()
                ));
            }
        }
        if let Some((state, step, sim_time)) = first.upload {
            // A state of more particles than this adapter holds (clamped): its first ones.
            let fits = state.len().min(self.sim.state_bytes() as usize);
            match self.sim.upload_state(gpu, &state[..fits], step) {
                Ok(()) => {
                    self.sim_time = sim_time;
                    self.share.uploads += 1;
                    self.share.invalidate = true;
                }
                Err(e) => {
                    self.share.notice = Some(format!("a keyframe refused: {e}"));
                    self.share.synced = false;
                    self.share.queue.clear();
                    self.share.queued_steps = 0;
                    return false;
                }
            }
        }
        if let Some((radius, max_speed)) = first.flocking {
            self.controls.radius = radius;
            self.controls.max_speed = max_speed;
        }
        let max = crate::clock::MAX_STEPS as usize;
        let mut stats = first.stats;
        let mut taken = first.params.len();
        self.frame_params = first.params;
        while !stats {
            let Some(next) = self.share.queue.front() else {
                break;
            };
            if next.starts_frame() || self.frame_params.len() + next.params.len() > max {
                break;
            }
            let Some(next) = self.share.queue.pop_front() else {
                break;
            };
            stats = next.stats;
            taken += next.params.len();
            self.frame_params.extend(next.params);
        }
        self.frame_params.truncate(max);
        self.share.queued_steps = self.share.queued_steps.saturating_sub(taken);
        self.share.frames_run += 1;
        // A count clamped on this adapter: the emitter's ring stays inside it.
        let n = self.sim.count().max(1);
        for p in &mut self.frame_params {
            p.emit_start %= n;
            p.emit_count = p.emit_count.min(n);
            self.sim_time += p.dt;
        }
        stats
    }

    /// The report's `share` object.
    pub(super) fn share_metrics(&self) -> serde_json::Value {
        let sh = &self.share;
        if sh.following {
            serde_json::json!({
                "following": true,
                "in_step": sh.synced,
                "publisher_epoch": sh.followed.map(|f| f.1),
                "received_step": sh.received,
                "queued_steps": sh.queued_steps,
                "frames_run": sh.frames_run,
                "keyframes_used": sh.keys_used,
                "state_uploads": sh.uploads,
                "restarts": sh.restarts,
                "out_of_step": sh.resyncs,
                "notice": sh.notice,
            })
        } else {
            serde_json::json!({
                "following": false,
                "epoch": sh.epoch,
                "keyframes_seed": sh.keys_seed,
                "keyframes_state": sh.keys_state,
                "keyframes_without_state": sh.keys_without_state,
                "state_copies_refused": sh.copies_refused,
            })
        }
    }
}

//! The particle scene's bodies (configuration, step parameters, state, view) and their length
//! checks.

use serde::{Deserialize, Serialize};

use super::{Body, Bytes};

/// Bytes of one particle in [`ParticlesKeyframe::state`]: the layout of
/// the views' `Particle` (`pos` xyz + age, `vel` xyz + lifetime, eight
/// little-endian f32).
pub const PARTICLE_BYTES: usize = 32;
/// Bytes of one step's parameters in [`ParticleFrame::params`]: the layout of
/// the views' `StepParams` (`StepParams` in `integrate.wgsl`,
/// little-endian).
pub const STEP_PARAMS_BYTES: usize = 208;
/// Most steps one [`ParticleFrame`] carries: a frame runs at most
/// [`vizdeck_base::clock::MAX_STEPS`].
pub const MAX_FRAME_STEPS: usize = vizdeck_base::clock::MAX_STEPS as usize;
/// Most frames a [`ParticlesKeyframe`] carries after its state (the state readback comes back
/// 1–3 frames after it was asked for; a publisher gives up on one that takes longer).
pub const MAX_KEY_FRAMES: usize = 120;

/// What the particle simulation starts from: the follower rebuilds it the same way (the
/// initial state is a function of count and seed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticleConfig {
    /// The publisher's configuration number, +1 each time its simulation restarts from the
    /// seed (another count or mode, a lost device): step numbers count from 0 in each.
    pub epoch: u64,
    /// Particles simulated (after the publisher's adapter clamped the count asked for).
    pub count: u32,
    /// Simulation mode: `free`, `grid` or `brute` (`--particle-mode`).
    pub mode: String,
    /// Seed of the initial state.
    pub seed: u64,
}

/// The steps one publisher frame ran, in order: the follower runs exactly these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticleFrame {
    /// The publisher's step count (in its configuration) before these steps.
    pub step: u64,
    /// Flocking radius (world units) and speed cap (world units / s) set before the steps,
    /// when they changed since the last frame sent.
    pub flocking: Option<(f32, f32)>,
    /// Each step's parameters, [`STEP_PARAMS_BYTES`] each, at most [`MAX_FRAME_STEPS`] steps
    /// (empty: a frame without a step).
    pub params: Bytes,
    /// Whether the publisher reduced its statistics (kinetic energy …) after these steps: a
    /// follower reduces at the same step, so the two can be compared.
    pub stats: bool,
}

/// A particles keyframe: the configuration, the state at step `step` (read back from the
/// publisher's GPU, or the seeded initial state), and the frames the publisher ran after
/// that step up to the one sending it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticlesKeyframe {
    /// The configuration the state belongs to.
    pub config: ParticleConfig,
    /// The step count (in the configuration) of `state`.
    pub step: u64,
    /// Flocking radius (world units) and speed cap (world units / s) in effect at `step`.
    pub flocking: (f32, f32),
    /// Simulated time at `step`, s (the camera's auto-rotation follows it).
    pub sim_time_s: f32,
    /// The particle state at `step`: `config.count` × [`PARTICLE_BYTES`] bytes (4 MiB at the
    /// default 131,072 particles; 3.0–3.2 MiB after zstd). `None`: the seeded initial state
    /// (`step` is 0), or a state too large for a message (`step` > 0: a follower cannot start
    /// from this keyframe and says so).
    pub state: Option<Bytes>,
    /// The frames run after `step`, in order (at most [`MAX_KEY_FRAMES`]).
    pub frames: Vec<ParticleFrame>,
    /// The view when it was sent.
    pub view: Option<ParticlesView>,
}

/// How the particle scene is looked at: what a follower attached to the publisher's view shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticlesView {
    /// Orbit camera: the point looked at (world units).
    pub target: [f32; 3],
    /// Eye distance from the target (world units, > 0).
    pub distance: f32,
    /// Rotation about +y, radians (0 while `auto_rotate`: the follower's own rotation follows
    /// the simulated time, which is the publisher's).
    pub yaw: f32,
    /// Elevation, radians.
    pub pitch: f32,
    /// Vertical field of view, radians (0 < fov < π).
    pub fov_y: f32,
    /// The camera turns with the simulated time.
    pub auto_rotate: bool,
    /// What the colour shows: `speed`, `density` or `age`.
    pub color_by: String,
    /// Sprite size, world units (> 0).
    pub sprite_size: f32,
    /// Draw style: `auto`, `sprites`, `splat` or `opaque`.
    pub style: String,
}

/// One publisher frame of the particle simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParticlesDelta {
    /// The simulation restarted from the seed before this frame (its steps then count from 0).
    pub restart: Option<ParticleConfig>,
    /// The frame's steps.
    pub frame: ParticleFrame,
    /// The view, when it changed since the previous message.
    pub view: Option<ParticlesView>,
}

/// The lengths a particles body carries: each frame's parameters a whole number of steps, at
/// most [`MAX_FRAME_STEPS`]; a keyframe's state `count` particles and at most
/// [`MAX_KEY_FRAMES`] frames; a known mode.
pub(super) fn check_particles(b: &Body) -> Result<(), String> {
    let frame = |f: &ParticleFrame| {
        let n = f.params.0.len();
        if !n.is_multiple_of(STEP_PARAMS_BYTES) || n / STEP_PARAMS_BYTES > MAX_FRAME_STEPS {
            Err(format!(
                "particles: {n} bytes of step parameters (a whole number of \
                 {STEP_PARAMS_BYTES}-byte steps, at most {MAX_FRAME_STEPS}, expected)"
            ))
        } else {
            Ok(())
        }
    };
    let config = |c: &ParticleConfig| {
        if matches!(c.mode.as_str(), "free" | "grid" | "brute") {
            Ok(())
        } else {
            Err(format!("particles: unknown mode {:?}", c.mode))
        }
    };
    let view = |v: &Option<ParticlesView>| match v {
        Some(v)
            if !(v.target.iter().all(|x| x.is_finite())
                && v.distance.is_finite()
                && v.distance > 0.0
                && v.yaw.is_finite()
                && v.pitch.is_finite()
                && v.fov_y > 0.0
                && v.fov_y < std::f32::consts::PI
                && v.sprite_size.is_finite()
                && v.sprite_size > 0.0) =>
        {
            Err("particles: a view with a non-finite or out-of-range camera or size".to_string())
        }
        _ => Ok(()),
    };
    match b {
        Body::ParticlesDelta(d) if d.view.is_some() => view(&d.view)?,
        Body::ParticlesKey(k) => view(&k.view)?,
        _ => {}
    }
    match b {
        Body::ParticlesKey(k) => {
            config(&k.config)?;
            if let Some(state) = &k.state {
                let want = k.config.count as usize * PARTICLE_BYTES;
                if state.0.len() != want {
                    return Err(format!(
                        "particles: a state of {} bytes for {} particles ({want} expected)",
                        state.0.len(),
                        k.config.count
                    ));
                }
            }
            if k.frames.len() > MAX_KEY_FRAMES {
                return Err(format!(
                    "particles: a keyframe of {} frames (at most {MAX_KEY_FRAMES})",
                    k.frames.len()
                ));
            }
            k.frames.iter().try_for_each(frame)
        }
        Body::ParticlesDelta(d) => {
            if let Some(c) = &d.restart {
                config(c)?;
            }
            frame(&d.frame)
        }
        Body::SeriesKey(_) | Body::SeriesDelta(_) => Ok(()),
        Body::SpectrogramKey(_) | Body::SpectrogramDelta(_) => Ok(()),
        Body::PointCloudKey(_) | Body::PointCloudDelta(_) | Body::Heartbeat => Ok(()),
    }
}

#[cfg(test)]
mod particle_tests {
    use super::super::{DecodeError, Envelope, decode, encode};
    use super::*;

    fn frame(steps: usize) -> ParticleFrame {
        ParticleFrame {
            step: 120,
            flocking: Some((0.05, 3.0)),
            params: Bytes((0..steps * STEP_PARAMS_BYTES).map(|i| i as u8).collect()),
            stats: true,
        }
    }

    fn envelope(body: Body) -> Envelope {
        Envelope {
            publisher: 1,
            seq: 2,
            frame: 3,
            stream_s: 0.05,
            sent_unix_ns: 4,
            scene: "particles".into(),
            body,
        }
    }

    fn key(count: u32, state_len: Option<usize>, frames: usize) -> Envelope {
        envelope(Body::ParticlesKey(ParticlesKeyframe {
            view: None,
            config: ParticleConfig {
                epoch: 1,
                count,
                mode: "grid".into(),
                seed: 42,
            },
            step: 120,
            flocking: (0.05, 3.0),
            sim_time_s: 2.0,
            state: state_len.map(|n| Bytes((0..n).map(|i| (i * 7) as u8).collect())),
            frames: (0..frames).map(|_| frame(1)).collect(),
        }))
    }

    #[test]
    fn particle_bodies_round_trip_with_their_bytes_as_bin() {
        let d = envelope(Body::ParticlesDelta(ParticlesDelta {
            view: None,
            restart: None,
            frame: frame(1),
        }));
        let bytes = encode(&d).expect("encode");
        // One step: its 208 bytes as one MessagePack bin, under the compression threshold.
        assert!(bytes.len() < 420, "{} bytes", bytes.len());
        assert_eq!(decode(&bytes).expect("decode"), d);
        let k = key(1000, Some(1000 * PARTICLE_BYTES), 3);
        assert!(k.body.is_keyframe() && k.body.topic() == "key");
        assert_eq!(decode(&encode(&k).expect("encode")).expect("decode"), k);
        let seed = key(1000, None, 1);
        assert_eq!(
            decode(&encode(&seed).expect("encode")).expect("decode"),
            seed
        );
    }

    #[test]
    fn particle_lengths_are_checked() {
        let bad = [
            key(1000, Some(1000 * PARTICLE_BYTES - 1), 1),
            key(10, Some(11 * PARTICLE_BYTES), 1),
            key(10, None, MAX_KEY_FRAMES + 1),
            envelope(Body::ParticlesDelta(ParticlesDelta {
                view: None,
                restart: None,
                frame: ParticleFrame {
                    params: Bytes(vec![0; STEP_PARAMS_BYTES + 1]),
                    ..frame(0)
                },
            })),
            envelope(Body::ParticlesDelta(ParticlesDelta {
                view: None,
                restart: None,
                frame: frame(MAX_FRAME_STEPS + 1),
            })),
            envelope(Body::ParticlesDelta(ParticlesDelta {
                view: None,
                restart: Some(ParticleConfig {
                    epoch: 0,
                    count: 1,
                    mode: "fast".into(),
                    seed: 0,
                }),
                frame: frame(0),
            })),
        ];
        for e in bad {
            let r = decode(&encode(&e).expect("encode"));
            assert!(matches!(r, Err(DecodeError::Corrupt(_))), "{r:?}");
        }
    }
}

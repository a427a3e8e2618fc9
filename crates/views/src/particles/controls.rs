//! The user-adjustable forces, emitter and flocking weights ([`Controls`]) and their defaults
//! for a particle count.

use super::sim;

/// User-adjustable forces, emitter and flocking weights (side panel).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Controls {
    /// Gravity along −y (units/s²).
    pub gravity: f32,
    /// Linear drag k (1/s).
    pub drag: f32,
    /// Attractors on.
    pub attractors: bool,
    /// Curl-noise strength (units/s²).
    pub curl_strength: f32,
    /// Curl-noise spatial frequency (1/unit).
    pub curl_frequency: f32,
    /// Emission rate (particles/s).
    pub emit_rate: f32,
    /// Emitter launch speed (units/s).
    pub emit_speed: f32,
    /// Emitter velocity spread (units/s).
    pub emit_spread: f32,
    /// Mean lifetime of emitted particles (s; 0 = immortal).
    pub lifetime: f32,
    /// Particles of one burst.
    pub burst: u32,
    /// Mouse force strength (units³/s²).
    pub mouse_strength: f32,
    /// Flocking cohesion weight.
    pub cohesion: f32,
    /// Flocking alignment weight.
    pub alignment: f32,
    /// Flocking separation weight.
    pub separation: f32,
    /// Flocking radius (world units; ≤ the grid cell size).
    pub radius: f32,
    /// Speed cap (units/s).
    pub max_speed: f32,
}

impl Controls {
    /// Defaults for `count` particles: emission replaces the population every 10 s.
    pub fn for_count(count: u32) -> Controls {
        Controls {
            gravity: 0.0,
            drag: 0.15,
            attractors: true,
            curl_strength: 0.1,
            curl_frequency: 2.0,
            emit_rate: count as f32 / 10.0,
            emit_speed: 0.41,
            emit_spread: 0.15,
            lifetime: 10.0,
            burst: (count / 20).max(1),
            mouse_strength: 0.05,
            cohesion: 1.0,
            alignment: 1.0,
            separation: 2.0,
            radius: sim::default_radius(count),
            max_speed: 3.0,
        }
    }
}

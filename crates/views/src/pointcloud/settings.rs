//! What the command line says about the point-cloud scene: where the cloud comes from
//! ([`CloudSource`]) and the flags ([`Settings`]).

use std::path::PathBuf;

use super::DEFAULT_SYNTHETIC;
use crate::pointcloud::raster::ColorMode;
use vizdeck_pointcloud::camera::ViewPreset;

/// Where the cloud comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum CloudSource {
    /// A LAS, LAZ, COPC or PLY file.
    File(PathBuf),
    /// A COPC file over HTTP(S) (`http://…` or `https://…`), streamed with range requests.
    Url(String),
    /// The synthetic terrain of N points.
    Synthetic(u64),
}

impl CloudSource {
    /// Parses `--pointcloud`: `synthetic:N` (N with an optional k, M or G suffix), an
    /// `http(s)://` URL, or a path.
    ///
    /// # Errors
    ///
    /// A message naming the value when N is not a count from 1 to 10¹⁰.
    pub fn parse(s: &str) -> Result<CloudSource, String> {
        if vizdeck_pointcloud::http::is_url(s) {
            return Ok(CloudSource::Url(s.to_string()));
        }
        let Some(n) = s.strip_prefix("synthetic") else {
            return Ok(CloudSource::File(PathBuf::from(s)));
        };
        let n = n
            .strip_prefix(':')
            .unwrap_or(if n.is_empty() { "" } else { n });
        if n.is_empty() {
            return Ok(CloudSource::Synthetic(DEFAULT_SYNTHETIC));
        }
        let count = vizdeck_base::text::parse_count(n).map_err(|e| format!("'{s}': {e}"))?;
        if count > vizdeck_pointcloud::synthetic::MAX_POINTS {
            return Err(format!(
                "'{s}': the point count must be from 1 to {}",
                vizdeck_pointcloud::synthetic::MAX_POINTS
            ));
        }
        Ok(CloudSource::Synthetic(count))
    }
}

/// What the command line says about the point-cloud scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The cloud.
    pub source: CloudSource,
    /// Point budget (`None`: from the adapter, [`BUDGET_CPU`](super::BUDGET_CPU) or
    /// [`BUDGET_GPU`](super::BUDGET_GPU)).
    pub budget: Option<u64>,
    /// Initial view, fitted to the bounds.
    pub view: ViewPreset,
    /// Colour mode (`None`: RGB where the cloud has colour, else elevation).
    pub color: Option<ColorMode>,
    /// Point radius in pixels, 0–3 (`None`: 1).
    pub radius: Option<u32>,
    /// Eye-dome lighting strength (0 = off).
    pub edl: f32,
    /// A pixel whose point is read out every frame (into the report's `hover`), as if hovered.
    pub probe: Option<(u32, u32)>,
    /// Whether frames wait for the nodes they ask for (default: in headless runs).
    pub wait_for_nodes: Option<bool>,
    /// Where octree caches of LAS/LAZ/PLY files live (`None`: the default,
    /// [`vizdeck_pointcloud::index::default_cache_dir`]).
    pub cache_dir: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            source: CloudSource::Synthetic(DEFAULT_SYNTHETIC),
            budget: None,
            view: ViewPreset::Iso,
            color: None,
            radius: None,
            edl: 1.0,
            probe: None,
            wait_for_nodes: None,
            cache_dir: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse() {
        assert_eq!(
            CloudSource::parse("synthetic:10M"),
            Ok(CloudSource::Synthetic(10_000_000))
        );
        assert_eq!(
            CloudSource::parse("synthetic:1G"),
            Ok(CloudSource::Synthetic(1_000_000_000))
        );
        assert_eq!(
            CloudSource::parse("synthetic:2500"),
            Ok(CloudSource::Synthetic(2500))
        );
        assert_eq!(
            CloudSource::parse("synthetic"),
            Ok(CloudSource::Synthetic(DEFAULT_SYNTHETIC))
        );
        assert_eq!(
            CloudSource::parse("a.laz"),
            Ok(CloudSource::File(PathBuf::from("a.laz")))
        );
        for bad in ["synthetic:0", "synthetic:x", "synthetic:20G"] {
            assert!(CloudSource::parse(bad).unwrap_err().contains(bad), "{bad}");
        }
    }
}

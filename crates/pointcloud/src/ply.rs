//! PLY files (ASCII and binary, the Stanford format research datasets ship meshes and scans
//! in) read as points through the `ply-rs-bw` crate: the `vertex` element's `x`, `y`, `z`
//! (any numeric type), colour from `red`/`green`/`blue` (or `r`/`g`/`b`; 8-bit, 16-bit or
//! float 0–1), intensity from `intensity` or `scalar_intensity`, classification from
//! `classification` or `class`. Faces and other elements are skipped: the mesh's vertices are
//! the points. The points are then indexed like a LAS file ([`super::index`]).

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ply_rs_bw::parser::{Parser, Reader};
use ply_rs_bw::ply::{PropertyAccess, PropertyAccessResult};

use super::PointCloudError;
use super::index::{Progress, Record};
use super::source::{NO_COLOR, SourceInfo, attribute_word};

/// One vertex as read.
#[derive(Debug, Default)]
struct Vertex {
    xyz: [f64; 3],
    rgb: [f32; 3],
    has_rgb: bool,
    /// Largest value the colour type holds (255, 65535, or 1 for floats).
    rgb_max: f32,
    intensity: f64,
    class: u8,
}

impl Vertex {
    fn set(&mut self, name: &str, v: f64, type_max: f32) -> PropertyAccessResult {
        match name {
            "x" => self.xyz[0] = v,
            "y" => self.xyz[1] = v,
            "z" => self.xyz[2] = v,
            "red" | "r" | "diffuse_red" => self.color(0, v, type_max),
            "green" | "g" | "diffuse_green" => self.color(1, v, type_max),
            "blue" | "b" | "diffuse_blue" => self.color(2, v, type_max),
            "intensity" | "scalar_intensity" | "scalar_Intensity" => self.intensity = v,
            "classification" | "class" | "scalar_classification" => {
                self.class = v.clamp(0.0, 255.0) as u8;
            }
            _ => return PropertyAccessResult::Ignored,
        }
        PropertyAccessResult::Set
    }

    fn color(&mut self, k: usize, v: f64, type_max: f32) {
        self.rgb[k] = v as f32;
        self.has_rgb = true;
        self.rgb_max = type_max;
    }
}

impl PropertyAccess for Vertex {
    fn new() -> Self {
        Vertex::default()
    }
    fn set_char(&mut self, n: &str, v: i8) -> PropertyAccessResult {
        self.set(n, f64::from(v), 127.0)
    }
    fn set_uchar(&mut self, n: &str, v: u8) -> PropertyAccessResult {
        self.set(n, f64::from(v), 255.0)
    }
    fn set_short(&mut self, n: &str, v: i16) -> PropertyAccessResult {
        self.set(n, f64::from(v), 32767.0)
    }
    fn set_ushort(&mut self, n: &str, v: u16) -> PropertyAccessResult {
        self.set(n, f64::from(v), 65535.0)
    }
    fn set_int(&mut self, n: &str, v: i32) -> PropertyAccessResult {
        self.set(n, f64::from(v), 255.0)
    }
    fn set_uint(&mut self, n: &str, v: u32) -> PropertyAccessResult {
        self.set(n, f64::from(v), 255.0)
    }
    fn set_float(&mut self, n: &str, v: f32) -> PropertyAccessResult {
        self.set(n, f64::from(v), 1.0)
    }
    fn set_double(&mut self, n: &str, v: f64) -> PropertyAccessResult {
        self.set(n, v, 1.0)
    }
}

/// An element that is read and thrown away (faces, edges, anything before the vertices).
struct Skip;

impl PropertyAccess for Skip {
    fn new() -> Self {
        Skip
    }
}

fn not_ply(path: &Path, reason: impl std::fmt::Display) -> PointCloudError {
    PointCloudError::NotPly {
        path: path.to_path_buf(),
        reason: vizdeck_base::text::one_line(&reason.to_string()),
    }
}

fn open_reader(path: &Path) -> Result<Reader<std::io::BufReader<std::fs::File>>, PointCloudError> {
    let file = std::fs::File::open(path).map_err(|source| PointCloudError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Reader::new(std::io::BufReader::new(file)))
}

/// Vertices `path` declares, from its header alone.
///
/// # Errors
///
/// [`PointCloudError::NotPly`] when the header does not parse,
/// [`PointCloudError::NoPoints`] when it declares no vertex (a face list only, or 0 vertices).
pub fn vertex_count(path: &Path) -> Result<usize, PointCloudError> {
    let mut reader = open_reader(path)?;
    count_in(path, &mut reader)
}

/// [`vertex_count`] of a PLY file read from `read`, named `path` in messages.
///
/// # Errors
///
/// As [`vertex_count`].
pub fn vertex_count_from<T: BufRead>(read: T, path: &Path) -> Result<usize, PointCloudError> {
    count_in(path, &mut Reader::new(read))
}

fn count_in<T: BufRead>(path: &Path, reader: &mut Reader<T>) -> Result<usize, PointCloudError> {
    let header = Parser::<Skip>::new()
        .read_header(reader)
        .map_err(|e| not_ply(path, e))?;
    let n = header.elements.get("vertex").map_or(0, |e| e.count);
    if n == 0 {
        return Err(PointCloudError::NoPoints {
            path: path.to_path_buf(),
        });
    }
    Ok(n)
}

/// Reads the vertices of `path` into `sink` as the index's records (see the module docs),
/// setting `progress.expected` to the vertices declared (the index counts what arrives).
///
/// # Errors
///
/// As [`vertex_count`]; [`PointCloudError::NotPly`] when the vertex data does not parse (a
/// truncated file, a malformed line), naming the file.
pub fn decode(
    path: &Path,
    progress: &Arc<Progress>,
    sink: &mut dyn FnMut(&[Record]) -> std::io::Result<()>,
) -> Result<SourceInfo, PointCloudError> {
    let file = std::fs::File::open(path).map_err(|source| PointCloudError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode_from(std::io::BufReader::new(file), path, progress, sink)
}

/// [`decode`] on a PLY file read from `read` (a file, or bytes), named `path` in messages: what
/// [`decode`] runs on the opened file.
///
/// # Errors
///
/// As [`decode`].
pub fn decode_from<T: BufRead>(
    read: T,
    path: &Path,
    progress: &Arc<Progress>,
    sink: &mut dyn FnMut(&[Record]) -> std::io::Result<()>,
) -> Result<SourceInfo, PointCloudError> {
    let mut reader = Reader::new(read);
    let vertex_parser = Parser::<Vertex>::new();
    let header = vertex_parser
        .read_header(&mut reader)
        .map_err(|e| not_ply(path, e))?;
    let declared = header.elements.get("vertex").map_or(0, |e| e.count);
    if declared == 0 {
        return Err(PointCloudError::NoPoints {
            path: path.to_path_buf(),
        });
    }
    progress.expected.store(declared as u64, Ordering::Relaxed);
    let mut vertices = Vec::new();
    for (name, def) in &header.elements {
        if name == "vertex" {
            vertices = vertex_parser
                .read_payload_for_element(&mut reader, def, &header)
                .map_err(|e| not_ply(path, e))?;
            break;
        }
        Parser::<Skip>::new()
            .read_payload_for_element(&mut reader, def, &header)
            .map_err(|e| not_ply(path, e))?;
    }
    let has_color = vertices.iter().any(|v| v.has_rgb);
    let intensity_max = vertices.iter().map(|v| v.intensity).fold(0.0, f64::max);
    // Intensities above 16 bits are scaled into them.
    let intensity_scale = if intensity_max > 65535.0 {
        65535.0 / intensity_max
    } else {
        1.0
    };
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    let mut dropped = 0usize;
    let mut records = Vec::with_capacity(65_536);
    for chunk in vertices.chunks(65_536) {
        records.clear();
        for v in chunk {
            if !v.xyz.iter().all(|c| c.is_finite()) {
                dropped += 1;
                continue;
            }
            for k in 0..3 {
                lo[k] = lo[k].min(v.xyz[k]);
                hi[k] = hi[k].max(v.xyz[k]);
            }
            let i = (v.intensity * intensity_scale).clamp(0.0, 65535.0) as u16;
            let rgba = if v.has_rgb {
                let c = |k: usize| (v.rgb[k] / v.rgb_max.max(1e-9) * 255.0).clamp(0.0, 255.0) as u8;
                u32::from_le_bytes([c(0), c(1), c(2), 255])
            } else {
                NO_COLOR
            };
            records.push(Record {
                xyz: v.xyz,
                gps_time: 0.0,
                word: attribute_word(v.class, 1, 1, i),
                rgba,
            });
        }
        sink(&records).map_err(|source| PointCloudError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    if dropped == vertices.len() {
        return Err(PointCloudError::NoPoints {
            path: path.to_path_buf(),
        });
    }
    Ok(SourceInfo {
        name: path.display().to_string(),
        kind: "PLY",
        scale: [1e-6; 3],
        has_color,
        has_gps_time: false,
        intensity_max: (intensity_max * intensity_scale).clamp(0.0, 65535.0) as u16,
        warning: (dropped > 0).then(|| {
            format!(
                "point cloud '{}': {dropped} vertices with non-finite coordinates left out",
                path.display()
            )
        }),
        decode_rate: None,
        build_rate: None,
        bounds: (lo, hi),
        bounds_from: "points",
    })
}

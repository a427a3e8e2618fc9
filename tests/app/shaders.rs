//! Every shader of the registry, composed with its `shaders/common/` preludes, parses and
//! validates with naga; the registry (entries and preludes) lists exactly the WGSL files on disk;
//! and the compiled-in copies equal the files.

use std::path::{Path, PathBuf};

use vizdeck::deck::SCENE_BLIT;
use vizdeck::gpu::shaders::{EGUI_PAINT, ShaderSource};
use vizdeck::scene::shaders::{COMMON, all as views};

/// Each crate that has shaders: its `shaders/` folder and the registry that lists them (the
/// preludes are the views' only).
fn registries() -> Vec<(PathBuf, Vec<ShaderSource>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        (views_dir(), views()),
        (root.join("shaders"), vec![SCENE_BLIT]),
        (root.join("crates/gpu/shaders"), vec![EGUI_PAINT]),
    ]
}

fn wgsl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("shaders/ is readable") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            wgsl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl") {
            out.push(path);
        }
    }
}

fn read_in(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// The views' `shaders/`, where the preludes are.
fn views_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/views/shaders")
}

/// A file of the views' `shaders/` (the preludes').
fn read(rel: &str) -> String {
    read_in(&views_dir(), rel)
}

#[test]
fn every_shader_parses_and_validates() {
    assert!(
        views().len() >= 5,
        "expected the registry, found {:?}",
        views()
    );
    let mut failures = Vec::new();
    for (dir, shaders) in registries() {
        for s in shaders {
            // Composed from the files on disk, so an edit is checked before the next build.
            let src: String = s
                .prelude
                .iter()
                .map(|p| read(p))
                .chain([read_in(&dir, s.path)])
                .collect();
            let module = match naga::front::wgsl::parse_str(&src) {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!(
                        "{} (+ {:?}): {}",
                        s.path,
                        s.prelude,
                        e.emit_to_string(&src)
                    ));
                    continue;
                }
            };
            let mut validator = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::all(),
            );
            if let Err(e) = validator.validate(&module) {
                failures.push(format!(
                    "{} (+ {:?}): {}",
                    s.path,
                    s.prelude,
                    e.emit_to_string(&src)
                ));
            }
            assert!(
                !module.entry_points.is_empty(),
                "{} has no entry point",
                s.path
            );
        }
    }
    assert!(
        failures.is_empty(),
        "invalid shaders:\n{}",
        failures.join("\n")
    );
}

#[test]
fn registry_lists_every_file_on_disk() {
    for (i, (dir, shaders)) in registries().into_iter().enumerate() {
        let mut files = Vec::new();
        wgsl_files(&dir, &mut files);
        let mut on_disk: Vec<String> = files
            .iter()
            .map(|p| {
                p.strip_prefix(&dir)
                    .expect("under shaders/")
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        on_disk.sort();
        let preludes = if i == 0 { COMMON } else { &[] };
        let mut listed: Vec<String> = shaders
            .iter()
            .map(|s| s.path.to_string())
            .chain(preludes.iter().map(|(p, _)| p.to_string()))
            .collect();
        listed.sort();
        assert_eq!(on_disk, listed, "{dir:?}");
        for s in &shaders {
            assert!(
                !s.path.starts_with("common/"),
                "{} is a prelude, not a pass",
                s.path
            );
            assert!(
                i == 0 || s.prelude.is_empty(),
                "{}: only the views' shaders have preludes",
                s.path
            );
            assert_eq!(
                read_in(&dir, s.path),
                s.body,
                "{} differs from the compiled-in copy",
                s.path
            );
            let mut composed = String::new();
            for p in s.prelude {
                let text = COMMON
                    .iter()
                    .find(|(c, _)| c == p)
                    .unwrap_or_else(|| panic!("{} uses {p}, which COMMON does not list", s.path));
                composed.push_str(text.1);
            }
            composed.push_str(s.body);
            assert_eq!(
                composed, s.source,
                "{}: source is not its preludes + body",
                s.path
            );
        }
    }
    for (path, text) in COMMON {
        assert!(
            path.starts_with("common/"),
            "prelude {path} outside shaders/common/"
        );
        assert_eq!(
            read(path),
            *text,
            "{path} differs from the compiled-in copy"
        );
    }
    // Every prelude is used by some shader.
    for (path, _) in COMMON {
        assert!(
            views().iter().any(|s| s.prelude.contains(path)),
            "prelude {path} is used by no shader"
        );
    }
}

//! vizdeck's LAS/LAZ loader against an independent reader: every committed real file (from
//! laspy's source distribution, BSD-2, `tests/data/pointcloud/LICENSE-laspy.txt`) read in batches
//! gives the point count, header facts, bounds of the points, sums of the raw integers, per-class
//! counts, intensity sum and first point that laspy 2.7 with lazrs read
//! (`tests/data/pointcloud/reference.json`, made by `make_reference.py` there). And bad input
//! gives one message naming the file, never a panic.

use std::path::{Path, PathBuf};

use vizdeck::pointcloud::{LasFile, PointCloudError, summarize};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pointcloud")
}

fn reference() -> serde_json::Map<String, serde_json::Value> {
    let text = std::fs::read_to_string(data_dir().join("reference.json")).expect("reference");
    serde_json::from_str(&text).expect("reference JSON")
}

fn f64s(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

#[test]
fn every_real_file_matches_laspy() {
    let reference = reference();
    assert!(reference.len() >= 7, "{} files", reference.len());
    for (name, want) in &reference {
        let path = data_dir().join(name);
        // A batch size that does not divide the counts, so batch edges are crossed.
        let s = summarize(&path, 977).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.warning.is_none(), "{name}: {:?}", s.warning);
        let i = &s.info;
        assert_eq!(
            format!("{}.{}", i.version.0, i.version.1),
            want["version"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(
            u64::from(i.point_format),
            want["point_format"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            i.header_points,
            want["header_point_count"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(s.points, want["points"].as_u64().unwrap(), "{name}");
        assert_eq!(i.scale.to_vec(), f64s(&want["scale"]), "{name} scale");
        assert_eq!(i.offset.to_vec(), f64s(&want["offset"]), "{name} offset");
        assert_eq!(i.header_min.to_vec(), f64s(&want["header_min"]), "{name}");
        assert_eq!(i.header_max.to_vec(), f64s(&want["header_max"]), "{name}");
        // The same formula (integer · scale + offset in f64) as laspy: equal to the bit.
        assert_eq!(s.min.unwrap().to_vec(), f64s(&want["min"]), "{name} min");
        assert_eq!(s.max.unwrap().to_vec(), f64s(&want["max"]), "{name} max");
        let sums: Vec<i64> = want["sum_raw"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(s.sum_raw.to_vec(), sums, "{name} raw sums");
        for (class, n) in want["class_counts"].as_object().unwrap() {
            let c: usize = class.parse().unwrap();
            assert_eq!(s.class_counts[c], n.as_u64().unwrap(), "{name} class {c}");
        }
        let total: u64 = s.class_counts.iter().sum();
        assert_eq!(total, s.points, "{name}: every point in one class");
        assert_eq!(
            s.intensity_sum,
            want["intensity_sum"].as_u64().unwrap(),
            "{name}"
        );
        // The first point, attribute by attribute.
        let mut f = LasFile::open(&path).unwrap();
        let b = f.next_batch(1).unwrap().unwrap();
        let first = &want["first"];
        assert_eq!(b.len(), 1);
        assert_eq!(b.xyz[0][0], first["x"].as_f64().unwrap(), "{name}");
        assert_eq!(b.xyz[0][1], first["y"].as_f64().unwrap(), "{name}");
        assert_eq!(b.xyz[0][2], first["z"].as_f64().unwrap(), "{name}");
        assert_eq!(
            u64::from(b.intensity[0]),
            first["intensity"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(b.classification[0]),
            first["classification"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(b.return_number[0]),
            first["return_number"].as_u64().unwrap()
        );
        assert_eq!(b.rgb.is_some(), i.has_color, "{name}");
        assert_eq!(b.gps_time.is_some(), i.has_gps_time, "{name}");
    }
}

/// The 110,000-point survey excerpt near 6.4e5 m: coordinates at the file's 1 cm scale, kept
/// exactly (an f32 of 6.4e5 m has a 6 cm step).
#[test]
fn survey_coordinates_keep_the_files_scale() {
    let path = data_dir().join("autzen_trim.laz");
    let mut f = LasFile::open(&path).unwrap();
    let info = f.info().clone();
    assert!(info.compressed);
    assert_eq!(info.scale, [0.01, 0.01, 0.01]);
    let b = f.next_batch(5000).unwrap().unwrap();
    for (p, r) in b.xyz.iter().zip(&b.raw) {
        assert!(p[0] > 6.0e5 && p[1] > 8.0e5, "{p:?}");
        for k in 0..3 {
            // Back to the integer exactly: no precision was lost on the way.
            let back = ((p[k] - info.offset[k]) / info.scale[k]).round();
            assert_eq!(back, f64::from(r[k]));
            assert!((p[k] - (f64::from(r[k]) * info.scale[k] + info.offset[k])).abs() == 0.0);
        }
    }
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vizdeck-pc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn a_text_file_named_las_is_refused_naming_it() {
    let path = temp("notes.las");
    std::fs::write(&path, "x,y,z\n1,2,3\n").unwrap();
    let e = LasFile::open(&path).err().expect("refused");
    let msg = e.to_string();
    assert!(matches!(e, PointCloudError::NotLas { .. }), "{msg}");
    assert!(msg.contains("notes.las") && !msg.contains('\n'), "{msg}");
}

#[test]
fn a_missing_or_empty_file_is_refused_naming_it() {
    let missing = temp("missing.laz");
    let e = LasFile::open(&missing).err().expect("refused");
    assert!(matches!(e, PointCloudError::Io { .. }), "{e}");
    assert!(e.to_string().contains("missing.laz"));
    let empty = temp("empty.las");
    std::fs::write(&empty, b"").unwrap();
    let e = LasFile::open(&empty).err().expect("refused");
    assert!(e.to_string().contains("empty.las"), "{e}");
}

/// A LAZ cut in half loses its chunk table (at the end): refused at open, naming the file and
/// saying it ends early. A LAS cut in half keeps its header: the points before the break are read,
/// then one error naming the file and how many points came; the summary keeps them with a
/// warning.
#[test]
fn truncated_files_say_so_and_keep_what_they_hold() {
    let bytes = std::fs::read(data_dir().join("autzen_trim.laz")).unwrap();
    let path = temp("half.laz");
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = summarize(&path, 10_000).expect_err("refused");
    assert!(matches!(e, PointCloudError::EndsEarly { .. }), "{e}");
    assert!(e.to_string().contains("half.laz"), "{e}");

    let bytes = std::fs::read(data_dir().join("simple.las")).unwrap();
    let path = temp("half.las");
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let s = summarize(&path, 100).expect("the header is intact");
    assert_eq!(s.info.header_points, 1065);
    // Every whole record before the cut: (bytes held − offset to point data) / record length,
    // the two read from the header's own bytes (LAS 1.2 table 3: u32 at 96, u16 at 105).
    let offset = u32::from_le_bytes(bytes[96..100].try_into().unwrap()) as usize;
    let record = u16::from_le_bytes(bytes[105..107].try_into().unwrap()) as usize;
    assert_eq!(s.points as usize, (bytes.len() / 2 - offset) / record);
    let w = s.warning.expect("a warning");
    assert!(w.contains("half.las") && w.contains("1065"), "{w}");
    // Reading on after the error gives nothing more, and no panic.
    let mut f = LasFile::open(&path).unwrap();
    let mut errors = 0;
    for _ in 0..100 {
        match f.next_batch(100) {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => errors += 1,
        }
    }
    assert_eq!(errors, 1);
}

/// A LAS with no points (written here by the `las` crate): read, zero points, no bounds.
#[test]
fn a_las_with_no_points_reads_as_empty() {
    let path = temp("none.las");
    {
        let header = las::Builder::default().into_header().unwrap();
        let writer = las::Writer::from_path(&path, header).unwrap();
        drop(writer);
    }
    let s = summarize(&path, 100).unwrap();
    assert_eq!((s.info.header_points, s.points), (0, 0));
    assert!(s.min.is_none() && s.warning.is_none());
}

/// COPC read node by node through its own hierarchy: the nodes' counts add up to laspy's point
/// count, the points read from them give laspy's raw sums and class counts, and every node's
/// points lie in its cube. A plain LAZ is refused as COPC, naming the file.
#[test]
fn copc_nodes_hold_every_point_in_their_cubes() {
    use vizdeck::pointcloud::copc::CopcFile;
    let reference = reference();
    let want = &reference["simple.copc.laz"];
    let path = data_dir().join("simple.copc.laz");
    let mut f = CopcFile::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let nodes: Vec<_> = f.nodes().into_iter().cloned().collect();
    assert!(!nodes.is_empty() && nodes[0].level == 0, "{nodes:?}");
    let total: u64 = nodes.iter().map(|n| n.points).sum();
    assert_eq!(total, want["points"].as_u64().unwrap());
    let mut sums = [0i64; 3];
    let mut classes = vec![0u64; 256];
    for (i, n) in nodes.iter().enumerate() {
        let b = f.read_node(i).unwrap();
        assert_eq!(b.len() as u64, n.points, "node {i}");
        for (p, r) in b.xyz.iter().zip(&b.raw) {
            for k in 0..3 {
                assert!(
                    p[k] >= n.min[k] - 1e-9 && p[k] <= n.min[k] + n.side + 1e-9,
                    "node {n:?}: {p:?} outside"
                );
                sums[k] += i64::from(r[k]);
            }
        }
        for &c in &b.classification {
            classes[usize::from(c)] += 1;
        }
    }
    let want_sums: Vec<i64> = want["sum_raw"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(sums.to_vec(), want_sums);
    for (class, n) in want["class_counts"].as_object().unwrap() {
        assert_eq!(
            classes[class.parse::<usize>().unwrap()],
            n.as_u64().unwrap()
        );
    }
    assert!(f.spacing() > 0.0);
    let e = CopcFile::open(&data_dir().join("simple.laz"))
        .err()
        .expect("not COPC");
    assert!(e.to_string().contains("simple.laz"), "{e}");
}

/// `simple.copc.laz` rewritten as PDAL and untwine write files: the subtree of node 1-1-1-0
/// moved to a child page that comes before the root page in the hierarchy record (the root
/// page holds a pointer to it). Returns the file's bytes.
fn copc_with_root_page_last() -> Vec<u8> {
    let b = std::fs::read(data_dir().join("simple.copc.laz")).unwrap();
    let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    // The COPC info VLR is the first VLR (at 375, payload at 375 + 54): root page offset at
    // payload byte 40, size at 48. The hierarchy EVLR (header of 60 bytes) is the only EVLR.
    let info = 375 + 54;
    let (root_at, root_size) = (u64_at(info + 40) as usize, u64_at(info + 48) as usize);
    let evlr = u64_at(235) as usize;
    assert_eq!(u32::from_le_bytes(b[243..247].try_into().unwrap()), 1);
    assert_eq!(
        root_at,
        evlr + 60,
        "the root page opens the hierarchy record"
    );
    let entries: Vec<&[u8]> = b[root_at..root_at + root_size].chunks(32).collect();
    let key = |e: &[u8]| -> [i32; 4] {
        std::array::from_fn(|k| i32::from_le_bytes(e[4 * k..4 * k + 4].try_into().unwrap()))
    };
    // Node 1-1-1-0 and its descendants: level l ≥ 1 with (x, y, z) >> (l − 1) = (1, 1, 0).
    let in_subtree = |e: &[u8]| {
        let [l, x, y, z] = key(e);
        l >= 1 && [x, y, z].map(|v| v >> (l - 1)) == [1, 1, 0]
    };
    let child: Vec<u8> = entries
        .iter()
        .filter(|e| in_subtree(e))
        .flat_map(|e| e.to_vec())
        .collect();
    assert_eq!(child.len(), 11 * 32, "1 + 2 + 8 nodes in the subtree");
    let child_at = evlr + 60;
    let mut root: Vec<u8> = entries
        .iter()
        .filter(|e| !in_subtree(e))
        .flat_map(|e| e.to_vec())
        .collect();
    for v in [1i32, 1, 1, 0] {
        root.extend_from_slice(&v.to_le_bytes());
    }
    root.extend_from_slice(&(child_at as u64).to_le_bytes());
    root.extend_from_slice(&(child.len() as i32).to_le_bytes());
    root.extend_from_slice(&(-1i32).to_le_bytes());
    let mut out = b[..evlr + 60].to_vec();
    out[evlr + 20..evlr + 28].copy_from_slice(&((child.len() + root.len()) as u64).to_le_bytes());
    out.extend_from_slice(&child);
    let new_root_at = out.len() as u64;
    out.extend_from_slice(&root);
    out[info + 40..info + 48].copy_from_slice(&new_root_at.to_le_bytes());
    out[info + 48..info + 56].copy_from_slice(&(root.len() as u64).to_le_bytes());
    out
}

/// A valid COPC file whose root hierarchy page comes after a child page (las-rs#157) is read
/// whole: every one of laspy's 1,065 points, with laspy's raw sums, from the same nodes as the
/// file with one page.
#[test]
fn copc_hierarchy_pages_are_read_in_any_order() {
    use vizdeck::pointcloud::copc::CopcFile;
    let reference = reference();
    let want = &reference["simple.copc.laz"];
    let path =
        std::env::temp_dir().join(format!("vizdeck-root-last-{}.copc.laz", std::process::id()));
    std::fs::write(&path, copc_with_root_page_last()).unwrap();
    let mut f = CopcFile::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut one_page = CopcFile::open(&data_dir().join("simple.copc.laz")).unwrap();
    let nodes: Vec<_> = f.nodes().into_iter().cloned().collect();
    let same: Vec<_> = one_page.nodes().into_iter().cloned().collect();
    assert_eq!(nodes, same);
    let total: u64 = nodes.iter().map(|n| n.points).sum();
    assert_eq!(total, want["points"].as_u64().unwrap());
    assert_eq!(total, 1065);
    let mut sums = [0i64; 3];
    for i in 0..nodes.len() {
        let b = f.read_node(i).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b, one_page.read_node(i).unwrap(), "node {i}");
        for r in &b.raw {
            for k in 0..3 {
                sums[k] += i64::from(r[k]);
            }
        }
    }
    let want_sums: Vec<i64> = want["sum_raw"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(sums.to_vec(), want_sums);
    let _ = std::fs::remove_file(&path);
}

/// A copy of `simple.las` with the f64 at header byte `at` set to `v` (scale factors at 131,
/// 139, 147; offsets at 155, 163, 171).
fn las_with(at: usize, v: f64, name: &str) -> PathBuf {
    let mut b = std::fs::read(data_dir().join("simple.las")).unwrap();
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    let path = std::env::temp_dir().join(format!("vizdeck-field-{}-{name}", std::process::id()));
    std::fs::write(&path, b).unwrap();
    path
}

/// Scale 0, NaN, infinite or negative and non-finite offsets are refused on open with one line
/// naming the file and the field (a scale of 0 would put every point on the offset).
#[test]
fn meaningless_scales_and_offsets_are_refused_naming_the_field() {
    let cases = [
        (
            131,
            0.0,
            "x scale factor is 0.0 (a scale factor must be a finite number above 0)",
        ),
        (
            139,
            f64::NAN,
            "y scale factor is NaN (a scale factor must be a finite number above 0)",
        ),
        (
            147,
            f64::INFINITY,
            "z scale factor is inf (a scale factor must be a finite number above 0)",
        ),
        (
            131,
            -0.01,
            "x scale factor is -0.01 (a scale factor must be a finite number above 0)",
        ),
        (
            171,
            f64::NEG_INFINITY,
            "z offset is -inf (an offset must be a finite number)",
        ),
        (
            155,
            f64::NAN,
            "x offset is NaN (an offset must be a finite number)",
        ),
        (
            131,
            1e300,
            "x scale factor is 1e300 (with its offset it puts coordinates beyond f64)",
        ),
    ];
    for (i, (at, v, what)) in cases.into_iter().enumerate() {
        let path = las_with(at, v, &format!("{i}.las"));
        let want = format!("point cloud '{}': the header's {what}", path.display());
        let e = LasFile::open(&path).err().expect("refused");
        assert!(matches!(e, PointCloudError::BadHeaderField { .. }), "{e:?}");
        assert_eq!(e.to_string(), want);
        let e = summarize(&path, 100).expect_err("refused");
        assert_eq!(e.to_string(), want);
        let _ = std::fs::remove_file(&path);
    }
}

/// `autzen_trim.laz` (110,000 points) with its header's count raised to 120,000, as a file
/// whose header claims more points than it holds. Returns its path.
fn laz_claiming_more(name: &str) -> PathBuf {
    let mut b = std::fs::read(data_dir().join("autzen_trim.laz")).unwrap();
    // LAS 1.2: legacy point count, u32 at header byte 107.
    assert_eq!(u32::from_le_bytes(b[107..111].try_into().unwrap()), 110_000);
    b[107..111].copy_from_slice(&120_000u32.to_le_bytes());
    let path = std::env::temp_dir().join(format!("vizdeck-more-{}-{name}", std::process::id()));
    std::fs::write(&path, b).unwrap();
    path
}

/// A LAZ whose header claims 120,000 points but holds 110,000 gives its 110,000 points, the
/// same as the true file read by the `las` crate (no phantom points at the origin), with a
/// warning naming the file and both counts.
#[test]
fn a_laz_claiming_more_points_than_it_holds_gives_what_it_holds() {
    let path = laz_claiming_more("summary.laz");
    let truth = summarize(&data_dir().join("autzen_trim.laz"), 100_000).unwrap();
    assert_eq!(truth.points, 110_000);
    for batch in [100_000, 1 << 20] {
        let s = summarize(&path, batch).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.points, 110_000, "batch {batch}");
        assert_eq!(
            (s.min, s.max, s.sum_raw),
            (truth.min, truth.max, truth.sum_raw)
        );
        let w = s.warning.expect("a warning");
        assert!(w.contains(&path.display().to_string()), "{w}");
        assert!(w.contains("after 110000 of 120000 points"), "{w}");
    }
    let _ = std::fs::remove_file(&path);
}

/// A LAZ 1.4 (layered chunks) whose first chunk states a 4 GB layer: the `laz` crate would
/// allocate and zero-fill that much before reading it. The chunk is not decoded: the data
/// ends before it, which the summary says, naming the file and both counts.
#[test]
fn a_layered_chunk_stating_layers_larger_than_itself_is_not_decoded() {
    let original = data_dir().join("1_4_w_evlr.laz");
    let header_points = las::Reader::from_path(&original)
        .unwrap()
        .header()
        .number_of_points();
    assert!(header_points > 0);
    let mut b = std::fs::read(&original).unwrap();
    // The first chunk follows the 8-byte chunk table offset at the offset to point data (u32
    // at 96): its first point raw (the record length, u16 at 105), its u32 point count, then
    // its first layer's size.
    let chunk = u32::from_le_bytes(b[96..100].try_into().unwrap()) as usize + 8;
    let first = chunk + usize::from(u16::from_le_bytes([b[105], b[106]])) + 4;
    b[first..first + 4].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let path = std::env::temp_dir().join(format!("vizdeck-layers-{}.laz", std::process::id()));
    std::fs::write(&path, b).unwrap();
    let s = summarize(&path, 4096).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.points, 0);
    let w = s.warning.expect("a warning");
    assert!(w.contains(&path.display().to_string()), "{w}");
    assert!(
        w.contains(&format!("after 0 of {header_points} points")),
        "{w}"
    );
    let _ = std::fs::remove_file(&path);
}

/// A batch's points are capped so the decoder's zero-filled buffer stays within
/// `MAX_BATCH_BYTES`: 8 MiB / record length, and at least one point (closed form).
#[test]
fn batch_points_cap_the_decoded_bytes() {
    use vizdeck::pointcloud::{MAX_BATCH_BYTES, batch_points};
    assert_eq!(MAX_BATCH_BYTES, 8 * 1024 * 1024);
    assert_eq!(batch_points(65_536, 65_535), 128);
    assert_eq!(batch_points(65_536, 128), 65_536);
    assert_eq!(batch_points(65_536, 129), 65_027);
    assert_eq!(batch_points(10_000_000, 20), 419_430);
    assert_eq!(batch_points(0, 20), 1);
    assert_eq!(batch_points(5, 0), 5);
}

/// A LAS whose records are 65,535 bytes (20 of format 0 and 65,515 extra bytes, the longest
/// the header allows) asked for 65,536 points at a time is read in batches of 128, so no
/// batch decodes more than 8 MiB, and every point comes back as written.
#[test]
fn long_records_are_read_in_batches_of_bounded_bytes() {
    let path = temp("long-records.las");
    let n = 130;
    {
        let mut b = las::Builder::from((1, 2));
        b.point_format.extra_bytes = 65_515;
        b.transforms = las::Vector {
            x: las::Transform {
                scale: 0.01,
                offset: 0.0,
            },
            y: las::Transform {
                scale: 0.01,
                offset: 0.0,
            },
            z: las::Transform {
                scale: 0.01,
                offset: 0.0,
            },
        };
        let mut w = las::Writer::from_path(&path, b.into_header().unwrap()).unwrap();
        for i in 0..n {
            let mut extra = vec![0u8; 65_515];
            extra[0] = i as u8;
            let p = las::Point {
                x: f64::from(i) * 0.5,
                y: 1.0,
                z: -f64::from(i),
                extra_bytes: extra,
                ..Default::default()
            };
            w.write_point(p).unwrap();
        }
        w.close().unwrap();
    }
    let mut file = LasFile::open(&path).unwrap();
    let mut sizes = Vec::new();
    let mut xs = Vec::new();
    while let Some(batch) = file.next_batch(65_536).unwrap() {
        sizes.push(batch.len());
        xs.extend(batch.xyz.iter().map(|p| (p[0], p[2])));
    }
    let _ = std::fs::remove_file(&path);
    assert_eq!(sizes, vec![128, 2]);
    let want: Vec<(f64, f64)> = (0..n)
        .map(|i| (f64::from(i) * 0.5, -f64::from(i)))
        .collect();
    assert_eq!(xs, want);
}

//! The side panel's octree cache section: the size of this file's cache and of the whole
//! cache directory, and buttons that clear this file's cache, the caches of files that are
//! gone, or all of them. Listing and removing run on `vizdeck-pointcloud-cache` (a listing
//! reads each cache's footer); the frame only polls for the answer.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError};

use vizdeck_pointcloud::cache::{self, CacheSummary, Cleared, human_bytes};

/// What a job on the cache thread does.
enum Job {
    /// Lists the directory.
    List,
    /// Removes one cache file (this cloud's).
    ClearFile(PathBuf),
    /// Removes the caches of files that are gone.
    DropOrphans,
    /// Removes every cache.
    ClearAll,
}

/// The cache section's state.
#[derive(Default)]
pub(super) struct CachePanel {
    /// The directory (resolved from the flag or the default).
    dir: Option<PathBuf>,
    summary: Option<CacheSummary>,
    job: Option<Receiver<(CacheSummary, Option<Cleared>)>>,
    /// What the last clean-up did.
    notice: Option<String>,
}

impl CachePanel {
    /// Lists the cache directory `dir` (`None`: the default) on the cache thread, or here
    /// when `block` (headless runs, whose reports do not depend on the machine's speed).
    pub(super) fn refresh(&mut self, dir: Option<PathBuf>, block: bool) {
        let dir = dir.unwrap_or_else(vizdeck_pointcloud::index::default_cache_dir);
        if block {
            self.summary = Some(cache::list(&dir));
            self.dir = Some(dir);
            return;
        }
        self.dir = Some(dir);
        self.start(Job::List);
    }

    fn start(&mut self, job: Job) {
        let Some(dir) = self.dir.clone() else {
            return;
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("vizdeck-pointcloud-cache".into())
            .spawn(move || {
                let cleared = match job {
                    Job::List => None,
                    Job::ClearFile(path) => {
                        let mut c = Cleared::default();
                        match cache::remove(&path) {
                            Ok(b) => {
                                c.caches = 1;
                                c.bytes = b;
                            }
                            Err(e) => {
                                c.error = Some(format!("{}: cannot remove: {e}", path.display()));
                            }
                        }
                        Some(c)
                    }
                    Job::DropOrphans => Some(cache::drop_orphans(&dir)),
                    Job::ClearAll => Some(cache::clear_all(&dir)),
                };
                let _ = tx.send((cache::list(&dir), cleared));
                crate::wake::wake();
            });
        match spawned {
            Ok(_) => self.job = Some(rx),
            Err(e) => self.notice = Some(format!("cannot start the cache thread: {e}")),
        }
    }

    /// Takes the cache thread's answer, when it is there.
    pub(super) fn poll(&mut self) {
        let Some(rx) = &self.job else {
            return;
        };
        match rx.try_recv() {
            Ok((summary, cleared)) => {
                if let Some(c) = cleared {
                    self.notice = Some(match c.error {
                        Some(e) => e,
                        None => format!(
                            "removed {} cache(s), {} freed; a file indexes again when next opened",
                            c.caches,
                            human_bytes(c.bytes)
                        ),
                    });
                }
                self.summary = Some(summary);
                self.job = None;
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => self.job = None,
        }
    }

    /// Whether a job is running (the frame polls for its answer).
    pub(super) fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// The last listing.
    pub(super) fn summary(&self) -> Option<&CacheSummary> {
        self.summary.as_ref()
    }

    /// Bytes of the cache file `path` (and its class counts) in the last listing.
    pub(super) fn file_bytes(&self, path: Option<&Path>) -> Option<u64> {
        Some(self.summary.as_ref()?.entry(path?)?.bytes)
    }

    /// The section: sizes and the buttons (`file`: this cloud's cache, when it has one).
    pub(super) fn ui(&mut self, ui: &mut egui::Ui, file: Option<&Path>) {
        let Some(summary) = &self.summary else {
            if self.busy() {
                ui.label("octree cache: measuring…");
            }
            return;
        };
        let this = file.and_then(|f| summary.entry(f)).map(|e| e.bytes);
        let orphans: Vec<_> = summary.entries.iter().filter(|e| e.orphaned()).collect();
        let orphan_bytes: u64 = orphans.iter().map(|e| e.bytes).sum();
        ui.label(format!(
            "octree cache: this file {}, all {} in {} cache(s)",
            this.map_or_else(|| "none".to_string(), human_bytes),
            human_bytes(summary.total_bytes()),
            summary.entries.len()
        ))
        .on_hover_text(summary.dir.display().to_string());
        let mut job = None;
        ui.horizontal(|ui| {
            if let (Some(f), Some(_)) = (file, this)
                && ui
                    .button("clear this file's")
                    .on_hover_text(
                        "removes this file's octree; it is indexed again when next opened",
                    )
                    .clicked()
            {
                job = Some(Job::ClearFile(f.to_path_buf()));
            }
            if !orphans.is_empty()
                && ui
                    .button(format!("clear {} of files gone", human_bytes(orphan_bytes)))
                    .clicked()
            {
                job = Some(Job::DropOrphans);
            }
            if ui
                .button("clear all")
                .on_hover_text("removes every cached octree in the cache directory")
                .clicked()
            {
                job = Some(Job::ClearAll);
            }
        });
        if let Some(n) = &self.notice {
            ui.small(n.as_str());
        }
        if let Some(j) = job
            && !self.busy()
        {
            self.start(j);
        }
    }
}

//! What [`Cli`] derives from its flags (the hop, the scene settings, the flags given) and the
//! checks across flags one parser cannot make.

use std::path::PathBuf;

use super::Cli;
use crate::audio::AudioSelection;
use crate::scene::SceneConfig;
use crate::scene::spectrogram::Settings as SpectrogramSettings;

impl Cli {
    /// `--hop`, or a quarter of `--fft-size` when it is not given (at least 1).
    pub fn hop(&self) -> usize {
        self.hop.unwrap_or((self.fft_size / 4).max(1))
    }

    /// Checks what one flag's parser cannot: `--hop` ≤ `--fft-size`. The error is clap's, naming
    /// `--hop` (print it with `e.exit()`).
    ///
    /// # Errors
    ///
    /// A clap `ValueValidation` error.
    pub fn check(&self) -> Result<(), clap::Error> {
        if self.hop() > self.fft_size {
            use clap::CommandFactory;
            return Err(Cli::command().error(
                clap::error::ErrorKind::ValueValidation,
                format!(
                    "invalid value '{}' for '--hop <N>': larger than --fft-size {} (the hop must be \
                     from 1 to the FFT size)",
                    self.hop(),
                    self.fft_size
                ),
            ));
        }
        Ok(())
    }

    /// The process's command line through [`parse_from_checked`](Self::parse_from_checked);
    /// exits with clap's message on error.
    pub fn parse_checked() -> Cli {
        match Cli::parse_from_checked(std::env::args_os()) {
            Ok(cli) => cli,
            Err(e) => e.exit(),
        }
    }

    /// Parses `args` (program name first), runs [`check`](Self::check), and notes the command
    /// line ([`argv`](Self::argv)) and which flags it gave ([`explicit`](Self::explicit)).
    ///
    /// # Errors
    ///
    /// clap's error for a bad flag or value.
    pub fn parse_from_checked<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        let argv: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        let matches = Cli::command().try_get_matches_from(&argv)?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        cli.check()?;
        cli.explicit = matches
            .ids()
            .filter(|id| {
                matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
            })
            .map(|id| id.to_string())
            .collect();
        cli.argv = argv;
        Ok(cli)
    }

    /// Whether `id` is the clap id of one of the flags (`fft_size` for `--fft-size`).
    pub fn is_flag_id(id: &str) -> bool {
        static IDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        IDS.get_or_init(|| {
            use clap::CommandFactory;
            Cli::command()
                .get_arguments()
                .filter(|a| a.get_long().is_some())
                .map(|a| a.get_id().to_string())
                .collect()
        })
        .iter()
        .any(|i| i == id)
    }

    /// Whether the stats overlay starts shown: only with `--overlay` (or a saved setting that
    /// had it shown, [`Cli::apply_saved`]); hidden by default, and `--no-overlay` hides it.
    pub fn overlay_on(&self) -> bool {
        self.overlay && !self.no_overlay
    }

    /// Whether flag `id` (clap's id: `fft_size` for `--fft-size`) was given on the command line.
    pub fn given(&self, id: &str) -> bool {
        self.explicit.iter().any(|e| e == id)
    }

    /// The settings file this run reads and writes ([`crate::settings`]): none for subcommands
    /// and with `--no-settings`; `--settings PATH`; else the default file for the window and none
    /// for headless runs.
    pub fn settings_path(&self) -> Option<PathBuf> {
        if self.no_settings || self.command.is_some() {
            return None;
        }
        match &self.settings {
            Some(p) => Some(p.clone()),
            None if self.headless => None,
            None => crate::settings::default_path(),
        }
    }

    /// Reads this run's settings file ([`Cli::settings_path`]) and takes the saved values of the
    /// flags the command line did not give ([`Cli::apply_saved`]).
    pub fn start_settings(&mut self) -> crate::settings::Start {
        let defaults = self.scene_config();
        let Some(path) = self.settings_path() else {
            return crate::settings::Start {
                path: None,
                settings: crate::settings::Settings::default(),
                defaults,
                messages: Vec::new(),
            };
        };
        let loaded = crate::settings::load(&path);
        let mut messages: Vec<String> = loaded.message.into_iter().collect();
        messages.extend(
            self.apply_saved(&loaded.settings)
                .into_iter()
                .map(|n| format!("settings file {}: {n} (skipped)", path.display())),
        );
        crate::settings::Start {
            path: Some(path),
            settings: loaded.settings,
            defaults,
            messages,
        }
    }

    /// Takes saved settings as if their flags had been given, for every flag the command line
    /// did not give: the scene shown first, the window size (not in headless runs), the overlay,
    /// and each scene's settings whose key is a flag's id (`fft_size`, `particle_mode`,
    /// `pointcloud_budget`, …; the scenes restore the rest themselves,
    /// [`crate::scene::Scene::restore_settings`]). Each saved value goes through the flag's own
    /// parser and [`check`](Self::check); one that does not pass is skipped, with a note in the
    /// returned list.
    pub fn apply_saved(&mut self, saved: &crate::settings::Settings) -> Vec<String> {
        use clap::CommandFactory;
        let mut notes = Vec::new();
        let mut extra: Vec<String> = Vec::new();
        // What each saved flag came from, for the notes (`spectrogram.fft_size = 1000`).
        let mut names: std::collections::HashMap<String, String> = Default::default();
        if !self.given("scene")
            && let Some(id) = &saved.scene
        {
            if crate::scene::index_of(id).is_some() {
                extra.push(format!("--scene={id}"));
            } else {
                notes.push(format!("scene: {id:?} is not a scene"));
            }
        }
        if !self.headless
            && !self.given("size")
            && let Some(w) = saved.window
        {
            extra.push(format!(
                "--size={}x{}",
                w.width.clamp(320, 8192),
                w.height.clamp(200, 8192)
            ));
        }
        if saved.overlay == Some(true) && !self.given("no_overlay") && !self.given("overlay") {
            extra.push("--overlay".into());
        }
        let cmd = Cli::command();
        for (scene, obj) in &saved.scenes {
            let Some(obj) = obj.as_object() else { continue };
            for (key, value) in obj {
                let Some(long) = cmd
                    .get_arguments()
                    .find(|a| a.get_id().as_str() == key)
                    .and_then(|a| a.get_long())
                else {
                    continue;
                };
                if self.given(key) {
                    continue;
                }
                let text = match value {
                    serde_json::Value::String(t) => t.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    serde_json::Value::Null => continue,
                    other => {
                        notes.push(format!("{scene}.{key}: {other} is not a value of --{long}"));
                        continue;
                    }
                };
                let arg = format!("--{long}={text}");
                names.insert(arg.clone(), format!("{scene}.{key} = {text}"));
                extra.push(arg);
            }
        }
        let argv = if self.argv.is_empty() {
            vec![std::ffi::OsString::from("vizdeck")]
        } else {
            self.argv.clone()
        };
        let with = |args: &[String]| {
            let mut all = vec![argv[0].clone()];
            all.extend(args.iter().map(std::ffi::OsString::from));
            all.extend(argv[1..].iter().cloned());
            Cli::parse_from_checked(all)
        };
        // Each saved flag alone first, so one bad value loses only itself.
        let mut kept = Vec::new();
        for arg in extra {
            match with(std::slice::from_ref(&arg)) {
                Ok(_) => kept.push(arg),
                Err(e) => {
                    let why = e.to_string();
                    let why = why
                        .lines()
                        .next()
                        .unwrap_or("")
                        .trim_start_matches("error: ");
                    let from = names.get(&arg).map_or(arg.as_str(), String::as_str);
                    notes.push(format!("{from}: {why}"));
                }
            }
        }
        match with(&kept) {
            Ok(mut cli) => {
                cli.explicit = std::mem::take(&mut self.explicit);
                cli.argv = argv;
                *self = cli;
            }
            Err(e) => notes.push(format!("saved settings together: {e}")),
        }
        notes
    }

    /// Scene inputs as the scenes see them.
    pub fn scene_config(&self) -> SceneConfig {
        let audio = match &self.audio_file {
            Some(p) => AudioSelection::File(p.clone()),
            None => AudioSelection::from_cli(&self.audio),
        };
        SceneConfig {
            audio,
            series_file: self.series_file.clone(),
            series_csv: crate::series::source::CsvOptions {
                time_format: self.time_format.clone(),
                time_unit: self.time_unit,
                series_key: self.series_key.clone(),
                time_zone: self.time_zone,
            },
            series_net: self.series_source.as_ref().map(|url| {
                crate::series::source::net::NetOptions {
                    url: url.clone(),
                    payload: crate::series::source::payload::PayloadOptions {
                        format: self.payload,
                        time_field: self.time_field.clone(),
                    },
                }
            }),
            series_count: self.series_count,
            series_rate: self.series_rate,
            series_kind: self.series_kind,
            seed: self.seed,
            particles: self.particles,
            particle_mode: self.particle_mode,
            particle_rate: self.particle_rate,
            audio_channel: self.audio_channel,
            spectrogram: SpectrogramSettings {
                fft_size: self.fft_size,
                hop: self.hop(),
                window: self.window,
                fft_on: self.fft_on,
                export_csv: self.export_spectrogram.clone(),
            },
            pointcloud: crate::scene::pointcloud::Settings {
                source: match (&self.pointcloud_file, &self.pointcloud) {
                    (Some(p), _) if crate::pointcloud::http::is_url(&p.to_string_lossy()) => {
                        crate::scene::pointcloud::CloudSource::Url(p.to_string_lossy().into())
                    }
                    (Some(p), _) => crate::scene::pointcloud::CloudSource::File(p.clone()),
                    (None, Some(s)) => s.clone(),
                    (None, None) => crate::scene::pointcloud::Settings::default().source,
                },
                budget: self.pointcloud_budget,
                view: self.view,
                color: self.pointcloud_color,
                radius: self.point_radius,
                edl: self.edl,
                probe: self.pointcloud_probe,
                wait_for_nodes: None,
                cache_dir: self.pointcloud_cache.clone(),
            },
            simulated_clock: self.headless,
            following: self.follow.is_some(),
            share: self.share.clone(),
            share_scene: self
                .share
                .as_ref()
                .and_then(|_| crate::scene::SCENES.get(self.scene_index()))
                .map(|e| e.id),
            share_window: crate::scene::timeseries::shared::WindowShape {
                series: self.share_series,
                samples: self.share_samples,
                rate: self.share_rate,
            },
            series_export: self.export_series.clone(),
        }
    }

    /// Index of `--scene` in [`SCENES`].
    pub fn scene_index(&self) -> usize {
        crate::scene::index_of(&self.scene).unwrap_or(0)
    }
}

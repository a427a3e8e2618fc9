//! Automatic reopening of a live input that was lost (issue 11).
//!
//! A live stream is *lost* when cpal's error callback reported an error (e.g. `StreamInvalidated:
//! PulseAudio disconnected` after the process was stopped for a second, or the server
//! restarted), when the presence watchdog saw the device leave the device list, or when no data
//! came for [`LOST_AFTER`] while not paused ([`lost_by_silence`]). [`super::AudioSource`] then
//! keeps the old stream (its samples, if any, count as a gap) and tries to open the *same device*
//! again — by its host id, else its name — on a background thread, so that the frame loop never
//! waits for the sound server: the first attempt after [`FIRST_DELAY`], then after a delay that
//! doubles up to [`MAX_DELAY`]. The frame loop only polls a channel ([`Reconnect::poll`]).
//!
//! **Timing** (issue 34: a stall used to take about 2.0 s to recover from, where 1 s is
//! possible). A stopped process (SIGSTOP/SIGCONT) or a stalled server often leaves a stream that
//! neither errs nor delivers; only the silence watchdog sees it, so [`LOST_AFTER`] bounds the
//! recovery: it was 2 s, and the delays doubled to 2 s as well, so a server back after 1.6 s was
//! tried again only at 3.1 s. Now a stream silent for 0.75 s (a live device delivers a buffer
//! every few tens of ms, silence included; [`capture::STALE_AFTER`] already reports 0.5 s) is
//! lost, the first try follows 50 ms later and retries come at most 0.5 s apart: a stall is
//! over within about 0.8 s plus the reopen itself, a server back within 0.5 s of its return.
//! The clock and the opener are parameters ([`Reconnect::start_at`], [`Reconnect::poll_at`]) so
//! this schedule is tested with a made-up clock and a fake device.
//!
//! Each state change is logged once: `audio input 'NAME' lost: REASON`, `audio input 'NAME':
//! reconnecting in N s (attempt K)`, `audio input reopened 'NAME' (K attempt(s), N s after the
//! loss)`.

use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use super::ChannelChoice;
use super::capture::{self, LiveParts};

/// Delay before the first reopen attempt.
pub(crate) const FIRST_DELAY: Duration = Duration::from_millis(50);

/// The longest delay between two attempts (the delay doubles from [`FIRST_DELAY`] up to this).
pub(crate) const MAX_DELAY: Duration = Duration::from_millis(500);

/// A live stream without data for this long (not paused) is taken as lost and reopened; shorter
/// silences are only reported as stale (see [`capture::STALE_AFTER`]).
pub const LOST_AFTER: Duration = Duration::from_millis(750);

/// Whether a live stream silent for `quiet` (no data callback) is lost: `quiet ≥ LOST_AFTER`
/// while not `paused` (a paused stream delivers nothing by design).
pub fn lost_by_silence(quiet: Duration, paused: bool) -> bool {
    !paused && quiet >= LOST_AFTER
}

/// What a reopen attempt runs on its thread: the device of a [`Target`] opened again. The live
/// source's is [`open_live`]; tests give a fake.
pub(crate) type Opener<T> = std::sync::Arc<dyn Fn(&Target) -> Result<T, String> + Send + Sync>;

/// Opens `target`'s device again (looked up by [`capture::find_input_device`]) as a new live
/// stream: the opener of a live source's reconnection.
///
/// # Errors
///
/// The lookup's or the stream's error, one line.
pub(crate) fn open_live(target: &Target) -> Result<LiveParts, String> {
    capture::find_input_device(&target.key)
        .map_err(|e| e.to_string())
        .and_then(|device| {
            capture::LiveCapture::open(&device, target.ring_capacity, target.channel, target.format)
        })
}

/// What is needed to open the device again.
#[derive(Clone, Debug)]
pub struct Target {
    /// Host id (`viz.monitor`) when known, else the device name; looked up with
    /// [`capture::find_input_device`].
    pub key: String,
    /// The user-facing device name, for messages.
    pub name: String,
    /// Ring capacity of the new stream.
    pub ring_capacity: usize,
    /// Channel choice of the new stream.
    pub channel: ChannelChoice,
    /// Forced sample format, if any.
    pub format: Option<cpal::SampleFormat>,
}

/// The state of one reconnection: from the loss to the reopened stream (`T`: what an attempt
/// opens, a live stream's [`LiveParts`]).
pub struct Reconnect<T: Send + 'static = LiveParts> {
    target: Target,
    /// Runs each attempt (on its own thread).
    open: Opener<T>,
    /// Why the stream was taken as lost (one line).
    reason: String,
    /// When the loss was noticed.
    lost_at: Instant,
    /// Attempts started so far.
    attempts: u32,
    /// Delay before the next attempt (doubles after each failure).
    delay: Duration,
    /// When the next attempt starts (none while one runs).
    next_try: Instant,
    /// The attempt running on its thread.
    pending: Option<mpsc::Receiver<Result<T, String>>>,
    /// The last attempt's error.
    last_failure: Option<String>,
}

impl<T: Send + 'static> std::fmt::Debug for Reconnect<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnect")
            .field("target", &self.target)
            .field("reason", &self.reason)
            .field("attempts", &self.attempts)
            .field("delay", &self.delay)
            .field("pending", &self.pending.is_some())
            .field("last_failure", &self.last_failure)
            .finish()
    }
}

/// The result of a successful reconnection, for the source's counters.
#[derive(Debug)]
pub struct Reopened<T = LiveParts> {
    /// The new stream.
    pub parts: T,
    /// Attempts it took.
    pub attempts: u32,
    /// From the loss being noticed to the new stream running.
    pub after: Duration,
    /// Wall-clock time of the reopen.
    pub at: SystemTime,
}

impl Reconnect {
    /// Starts a reconnection of the live device `target`, lost for `reason`, now; logs the loss
    /// and the first delay.
    pub fn start(target: Target, reason: String) -> Reconnect {
        Reconnect::start_at(
            target,
            reason,
            Instant::now(),
            std::sync::Arc::new(open_live),
        )
    }

    /// Advances the state machine now ([`Reconnect::poll_at`]).
    pub fn poll(&mut self) -> Option<Reopened> {
        self.poll_at(Instant::now())
    }
}

impl<T: Send + 'static> Reconnect<T> {
    /// Starts a reconnection of `target`, lost for `reason` at `now`, each attempt run by `open`;
    /// logs the loss and the first delay.
    pub fn start_at(target: Target, reason: String, now: Instant, open: Opener<T>) -> Reconnect<T> {
        log::warn!("audio input '{}' lost: {reason}", target.name);
        log::info!(
            "audio input '{}': reconnecting in {:.1} s (attempt 1)",
            target.name,
            FIRST_DELAY.as_secs_f64()
        );
        Reconnect {
            target,
            open,
            reason,
            lost_at: now,
            attempts: 0,
            delay: FIRST_DELAY,
            next_try: now + FIRST_DELAY,
            pending: None,
            last_failure: None,
        }
    }

    /// Advances the state machine at `now` (the caller's clock) without blocking: starts an
    /// attempt on its own thread when its time has come, collects a finished one. Returns the new
    /// stream once one is open (`after`: from the loss to `now`).
    pub fn poll_at(&mut self, now: Instant) -> Option<Reopened<T>> {
        if let Some(rx) = &self.pending {
            let failure = match rx.try_recv() {
                Err(mpsc::TryRecvError::Empty) => return None,
                Ok(Ok(parts)) => {
                    self.pending = None;
                    let after = now.saturating_duration_since(self.lost_at);
                    log::info!(
                        "audio input reopened '{}' ({} attempt(s), {:.2} s after the loss)",
                        self.target.name,
                        self.attempts,
                        after.as_secs_f64()
                    );
                    return Some(Reopened {
                        parts,
                        attempts: self.attempts,
                        after,
                        at: SystemTime::now(),
                    });
                }
                Ok(Err(e)) => e,
                Err(mpsc::TryRecvError::Disconnected) => "the reopen thread ended".to_string(),
            };
            self.pending = None;
            self.delay = (self.delay * 2).min(MAX_DELAY);
            self.next_try = now + self.delay;
            log::info!(
                "audio input '{}': reopen failed ({failure}); reconnecting in {:.1} s (attempt {})",
                self.target.name,
                self.delay.as_secs_f64(),
                self.attempts + 1
            );
            self.last_failure = Some(failure);
            return None;
        }
        if now >= self.next_try {
            self.attempts += 1;
            let (tx, rx) = mpsc::channel();
            let target = self.target.clone();
            let open = self.open.clone();
            let spawned = std::thread::Builder::new()
                .name("vizdeck-audio-reopen".into())
                .spawn(move || {
                    let _ = tx.send(open(&target));
                });
            match spawned {
                Ok(_) => self.pending = Some(rx),
                Err(e) => {
                    // No thread now: try again after the delay (a failed attempt).
                    self.delay = (self.delay * 2).min(MAX_DELAY);
                    self.next_try = now + self.delay;
                    self.last_failure = Some(format!("cannot start the reopen thread: {e}"));
                }
            }
        }
        None
    }

    /// One line for the UI: `"audio device 'NAME' lost (REASON); reconnecting (attempt K, …)"`.
    pub fn status(&self) -> String {
        let now = Instant::now();
        let next = if self.pending.is_some() {
            "reopening now".to_string()
        } else {
            format!(
                "next try in {:.1} s",
                self.next_try.saturating_duration_since(now).as_secs_f64()
            )
        };
        let failed = self
            .last_failure
            .as_ref()
            .map(|f| format!("; last try: {f}"))
            .unwrap_or_default();
        format!(
            "audio device '{}' lost ({}) {:.1} s ago; reconnecting: {next} (attempt {}){failed}",
            self.target.name,
            self.reason,
            now.saturating_duration_since(self.lost_at).as_secs_f64(),
            self.attempts + u32::from(self.pending.is_none()),
        )
    }

    /// Why the stream was taken as lost.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Whether an attempt is running on its thread now.
    pub fn attempt_running(&self) -> bool {
        self.pending.is_some()
    }

    /// When the next attempt starts (meaningless while one runs, [`Reconnect::attempt_running`]).
    pub fn next_try(&self) -> Instant {
        self.next_try
    }
}

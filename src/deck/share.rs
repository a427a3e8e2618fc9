//! `--publish` and `--follow` in the frame ([`crate::publish`]): a follower takes what arrived
//! and applies it to the shown scene before the UI (switching to the publisher's scene while
//! attached); a publisher sends what the shown scene ingested once the frame's ingest is done;
//! both get a section at the top of the side panel and an object in the report.

use std::time::{Duration, Instant};

use super::{Deck, SceneSlot};
use crate::publish::follower::Follower;
use crate::publish::publisher::Publisher;
use crate::scene::SCENES;

/// The deck's broker connections.
#[derive(Default)]
pub(super) struct Sharing {
    pub(super) publisher: Option<Publisher>,
    pub(super) follower: Option<Follower>,
}

impl Deck {
    /// Starts publishing to `publish` and / or following `follow` (URLs of `--publish`,
    /// `--follow`); each connects in the background.
    ///
    /// # Errors
    ///
    /// A URL that does not parse, a TLS set-up that fails: one line naming the flag and URL.
    pub fn start_sharing(
        &mut self,
        publish: Option<&str>,
        follow: Option<&str>,
    ) -> Result<(), String> {
        if let Some(url) = publish {
            self.sharing.publisher = Some(Publisher::start(url)?);
        }
        if let Some(url) = follow {
            self.sharing.follower = Some(Follower::start(url)?);
        }
        Ok(())
    }

    /// Whether this deck follows a publisher.
    pub fn following(&self) -> bool {
        self.sharing.follower.is_some()
    }

    /// A headless follower waits up to `timeout` for the publisher's next message before its
    /// frame (it draws when data arrives, at most once per frame of its clock).
    pub fn wait_for_publisher(&mut self, timeout: Duration) {
        if let Some(f) = &mut self.sharing.follower {
            f.wait(timeout);
        }
    }

    /// Before the frame's scene is made ready: takes what arrived and, attached, shows the
    /// publisher's scene.
    pub(super) fn follow_poll(&mut self) {
        let Some(f) = &mut self.sharing.follower else {
            return;
        };
        f.poll();
        if let Some(i) = f.wanted_scene().and_then(crate::scene::index_of)
            && i != self.active
        {
            self.switch_to(i);
        }
    }

    /// The user picked scene `index` from the menu: a follower attached to the publisher's view
    /// detaches when it is not the publisher's scene (else the next frame would switch back),
    /// and says so.
    pub(super) fn user_switched(&mut self, index: usize) {
        let Some(f) = &mut self.sharing.follower else {
            return;
        };
        if f.wanted_scene().is_some_and(|w| w != SCENES[index].id) {
            f.attached = false;
            self.toast(
                "detached from the publisher's view: Attach in the side panel returns to it".into(),
            );
        }
    }

    /// After the frame's early ingest: the publisher's messages applied to the shown scene.
    pub(super) fn follow_apply(&mut self) {
        if let (Some(f), SceneSlot::Ready(scene)) =
            (&mut self.sharing.follower, &mut self.slots[self.active])
        {
            f.apply(scene.as_mut());
        }
    }

    /// After the frame's ingest: the shown scene's new data published.
    pub(super) fn publish_frame(&mut self) {
        if let (Some(p), SceneSlot::Ready(scene)) =
            (&mut self.sharing.publisher, &mut self.slots[self.active])
        {
            p.frame(scene.as_mut(), self.frame, self.pacing.run_s);
        }
    }

    /// The frame was presented at `at`: the follower's lag.
    pub(super) fn share_presented(&mut self, at: Instant) {
        if let Some(f) = &mut self.sharing.follower {
            f.presented(at);
        }
    }

    /// The follower's notice (waiting, unreachable, a newer protocol), shown over the scene.
    pub(super) fn share_notice(&self) -> Option<String> {
        self.sharing.follower.as_ref().and_then(Follower::notice)
    }

    /// The side panel's publishing / following section (nothing when neither runs).
    pub(super) fn share_ui(&mut self, ui: &mut egui::Ui) {
        let mut shown = false;
        if let Some(p) = &mut self.sharing.publisher {
            p.ui(ui);
            shown = true;
        }
        if let Some(f) = &mut self.sharing.follower {
            if shown {
                ui.add_space(4.0);
            }
            f.ui(ui);
            shown = true;
        }
        if shown {
            ui.separator();
        }
    }

    /// The report's `publish` and `follow` objects (absent when not running).
    pub fn share_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        if let Some(p) = &self.sharing.publisher {
            m.insert("publish".into(), p.metrics());
        }
        if let Some(f) = &self.sharing.follower {
            m.insert("follow".into(), f.metrics());
        }
        m
    }

    /// A follower that applied nothing during the run: why (for the CLI's exit status).
    pub fn follow_failure(&self) -> Option<String> {
        let f = self.sharing.follower.as_ref()?;
        (f.applied() == 0).then(|| f.failure())
    }
}

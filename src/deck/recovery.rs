//! Recovery from a lost GPU device: the deck forgets the work in flight on the old device and
//! moves onto a new one (egui painter, targets, queries, uploader, readback ring, and every open
//! scene's GPU objects made anew from its CPU-side state), and `VIZDECK_LOSE_DEVICE_AT_FRAME`
//! destroys the device on purpose for tests. The frame loops ([`crate::app`],
//! [`crate::headless`]) notice the loss ([`Gpu::lost`]) and make the new [`Gpu`].

use std::time::Instant;

use super::composite::SceneBlit;
use super::{Deck, SceneSlot, new_readback_ring};
use crate::gpu::Gpu;
use crate::gpu::egui_painter::EguiPainter;
use crate::gpu::timing::GpuTimer;
use crate::gpu::upload::Uploader;
use crate::scene::SCENES;

/// Environment variable that destroys the GPU device before frame N (tests of the recovery).
pub const LOSE_DEVICE_ENV: &str = "VIZDECK_LOSE_DEVICE_AT_FRAME";

impl Deck {
    /// Destroys the device now when `VIZDECK_LOSE_DEVICE_AT_FRAME` names the frame about to be
    /// drawn (once). The frame loops call this before each frame, then check [`Gpu::lost`].
    pub fn inject_device_loss(&self, gpu: &Gpu) {
        if self.recovery.lose_at_frame == Some(self.frame) && self.recovery.device_resets == 0 {
            log::warn!(
                "{LOSE_DEVICE_ENV}={}: destroying the GPU device",
                self.frame
            );
            gpu.destroy_device();
        }
    }

    /// Forgets the GPU work in flight on a lost device (readback copies, timestamp queries), so
    /// that stopping the recording or finishing never waits for a device that will not answer.
    pub fn abandon_gpu_work(&mut self) {
        self.readback = new_readback_ring();
        self.files.readback_mark = 0;
        self.timer = None;
    }

    /// Moves the deck onto `gpu`, a new device replacing one that was lost (`reason`): the egui
    /// painter, the scene texture, timestamp queries, the uploader and the readback ring are
    /// made anew (copies in flight on the old device are gone), every scene that was open
    /// re-creates its GPU objects from its CPU-side state ([`Scene::recreate_gpu`](crate::scene::Scene::recreate_gpu); one that
    /// cannot is shown failed, with its reason), and the recording carries on in the same file
    /// (the next row has `DeviceReset` = 1). Returns the new egui context (the window hands it
    /// to egui-winit): it starts with the old one's memory, and uploads its font atlas anew.
    /// `noticed`: when the loss was noticed (the recovery time runs from there to the next
    /// present, [`device_reset_ms`](Deck::device_reset_ms)).
    pub fn replace_gpu(&mut self, gpu: &Gpu, reason: &str, noticed: Instant) -> egui::Context {
        self.recovery.device_resets += 1;
        self.recovery.reset_started = Some(noticed);
        let memory = self.ui_state.egui_ctx.memory(|m| m.clone());
        self.ui_state.egui_ctx = egui::Context::default();
        self.ui_state.egui_ctx.memory_mut(|m| *m = memory);
        self.abandon_gpu_work();
        self.ui_state.painter = EguiPainter::new(&gpu.device, self.out.output_format);
        self.out.blit = SceneBlit::new(&gpu.device, self.out.output_format);
        self.out.target = None;
        self.out.background = super::Background::default();
        self.out.target_px = (0, 0);
        self.out.depth = None;
        self.timer = GpuTimer::new(&gpu.device, &gpu.queue);
        self.uploader = Uploader::new(&gpu.device, self.uploader.strategy());
        self.ui_uploader = Uploader::new(&gpu.device, self.uploader.strategy());
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if let SceneSlot::Ready(scene) = slot
                && let Err(e) = scene.recreate_gpu(gpu)
            {
                log::error!(
                    "{}: cannot recreate after the GPU reset: {e}",
                    SCENES[i].title
                );
                *slot = SceneSlot::Failed(e.to_string());
            }
        }
        let msg = format!("GPU device was lost and recreated ({reason})");
        log::warn!("{msg}");
        self.toast(msg);
        self.ui_state.egui_ctx.clone()
    }
}

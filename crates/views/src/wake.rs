//! Waking the window's event loop from other threads. An idle window waits for input
//! (the deck's `Redraw::OnInput`); work that finishes on a thread of its own (a point-cloud
//! node decoded by a loader) calls [`wake`] so the frame that shows it is drawn now, not at the
//! next mouse move. The windowed app installs the waker (an `EventLoopProxy` event that asks
//! for a redraw, the app's window loop); headless runs draw every frame and install none.

use std::sync::{Arc, RwLock};

/// A callback that wakes the frame loop (cheap, callable from any thread, any number of times;
/// wake-ups that come while a frame is pending fold into it).
pub type Waker = Arc<dyn Fn() + Send + Sync>;

static WAKER: RwLock<Option<Waker>> = RwLock::new(None);

/// Installs `waker` for the process (the event loop's; `None` removes it).
pub fn set(waker: Option<Waker>) {
    if let Ok(mut w) = WAKER.write() {
        *w = waker;
    }
}

/// The installed waker, if any.
pub fn get() -> Option<Waker> {
    WAKER.read().ok().and_then(|w| w.clone())
}

/// Wakes the frame loop, when a waker is installed.
pub fn wake() {
    if let Some(w) = get() {
        w();
    }
}

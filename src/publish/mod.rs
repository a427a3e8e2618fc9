//! Many screens on one logical frame: `--publish URL` sends what the active scenes ingest
//! through an MQTT broker, as data (keyframes retained, deltas in between); `--follow URL`
//! renders the publisher's logical frame from them. [`protocol`]: the wire format (the
//! `vizdeck-protocols` crate); [`follow`]: the follower's ordering of keyframes and deltas.

pub mod follow;
pub mod follower;
pub mod link;
pub mod publisher;
pub use vizdeck_protocols::publish as protocol;

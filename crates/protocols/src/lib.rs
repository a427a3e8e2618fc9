//! The wire formats, below the views that speak them: [`publish`], the messages `--publish`
//! sends over MQTT and `--follow` applies (each view's body, its checks, the framing and
//! compression), and [`share`], the handshake `--share` gives a producer process over a Unix
//! socket (the description of the shared GPU memory and the frame messages). Each is the
//! specification of its format; the views turn their state into these messages and back.

pub mod publish;
pub mod share;

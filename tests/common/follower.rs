//! A headless `vizdeck --follow` run by a test: spawned, waited for until it has subscribed (it
//! logs "subscribed to …" once the broker acknowledged both subscriptions), its standard error
//! read on a thread (so the pipe never fills), stopped with SIGTERM (it then ends its run,
//! writing its report and exports).

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

/// A running follower.
pub struct Follower {
    child: Child,
    stderr: JoinHandle<String>,
}

impl Follower {
    /// Spawns `cmd` (a vizdeck with `--follow`; its stderr is piped here) and returns once it
    /// has subscribed. Panics, with what it printed, if it ends before that.
    pub fn spawn(mut cmd: Command) -> Follower {
        let mut child = cmd.stderr(Stdio::piped()).spawn().expect("vizdeck");
        let mut lines = std::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
        let mut seen = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap_or_default();
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("subscribed to") {
                break;
            }
        }
        assert!(
            seen.contains("subscribed to"),
            "the follower did not subscribe: {seen}"
        );
        let stderr = std::thread::spawn(move || {
            for line in lines {
                seen.push_str(&line.unwrap_or_default());
                seen.push('\n');
            }
            seen
        });
        Follower { child, stderr }
    }

    /// SIGTERM; whether it then exited successfully, and all it printed on stderr.
    pub fn stop(self) -> (bool, String) {
        let Follower { mut child, stderr } = self;
        let _ = Command::new("kill").arg(child.id().to_string()).status();
        let ok = child.wait().expect("wait").success();
        (ok, stderr.join().unwrap_or_default())
    }
}

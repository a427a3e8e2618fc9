//! A Debian `mosquitto` broker for a test: its own config, port and persistence directory,
//! started and killed by the test (restartable on the same port and database). Installed by
//! `cargo xtask test`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running (or stopped) broker.
pub struct Broker {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

impl Broker {
    /// A broker on a free port, anonymous clients allowed, persistence on (stopped until
    /// [`start`](Broker::start)).
    pub fn new(tag: &str) -> Broker {
        Broker::with_config(tag, "allow_anonymous true\n")
    }

    /// A broker whose config has `extra` lines (in its own directory, `{dir}` replaced by it).
    pub fn with_config(tag: &str, extra: &str) -> Broker {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("vizdeck_mqtt_{}_{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A broker started as root runs as the `mosquitto` user: it must be able to write its
        // database and log here.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let conf = format!(
            "listener {port} 127.0.0.1\npersistence true\npersistence_location {}/\n\
             max_queued_messages 100000\nlog_dest file {}/log\nlog_type all\n{}",
            dir.display(),
            dir.display(),
            extra.replace("{dir}", &dir.display().to_string())
        );
        std::fs::write(dir.join("mosquitto.conf"), conf).unwrap();
        Broker {
            port,
            dir,
            child: None,
        }
    }

    /// The broker's directory (config, database, password file).
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Starts the broker and waits until it accepts connections (at most 10 s).
    pub fn start(&mut self) {
        let bin = ["/usr/sbin/mosquitto", "mosquitto"]
            .into_iter()
            .find(|b| !b.starts_with('/') || std::path::Path::new(b).exists())
            .unwrap();
        let child = Command::new(bin)
            .arg("-c")
            .arg(self.dir.join("mosquitto.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mosquitto (apt-get install mosquitto; `cargo xtask test` installs it)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "mosquitto did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the broker (SIGTERM, so it writes its database) and waits for it.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill").arg(c.id().to_string()).status();
            let _ = c.wait();
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
        if std::env::var_os("VIZDECK_KEEP_BROKER").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

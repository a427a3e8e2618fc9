//! A small HTTP/1.1 file server for the tests of COPC over HTTP: serves one directory on
//! 127.0.0.1, honours `Range: bytes=a-b` with `206 Partial Content` (or, in
//! [`RangeSupport::Ignore`] mode, answers `200` with the whole file, as a server without range
//! support does), `404` for a missing file, one request per connection (`Connection: close`),
//! and counts requests.

#![allow(dead_code)] // not every includer uses every item

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether the server honours `Range`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeSupport {
    /// `206` with the range asked for.
    Honour,
    /// `200` with the whole file.
    Ignore,
}

/// A running server; it stops with the test process.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Requests answered.
    pub requests: Arc<AtomicU64>,
}

/// Serves `dir` in a background thread.
pub fn serve(dir: PathBuf, ranges: RangeSupport) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicU64::new(0));
    let count = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (dir, count) = (dir.clone(), count.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                let mut range = None;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    let lower = h.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("range:") {
                        let v = v.trim().trim_start_matches("bytes=");
                        if let Some((a, b)) = v.split_once('-') {
                            range = Some((a.parse::<u64>().ok(), b.parse::<u64>().ok()));
                        }
                    }
                }
                count.fetch_add(1, Ordering::Relaxed);
                let mut out = stream;
                let file = dir.join(path.trim_start_matches('/'));
                let Ok(body) = std::fs::read(&file) else {
                    let _ = out.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    return;
                };
                let len = body.len() as u64;
                match (range, ranges) {
                    (Some((Some(a), b)), RangeSupport::Honour) if a < len => {
                        let b = b.unwrap_or(len - 1).min(len - 1);
                        let part = &body[a as usize..=b as usize];
                        let head = format!(
                            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{len}\r\n\
                             Content-Length: {}\r\nConnection: close\r\n\r\n",
                            part.len()
                        );
                        let _ = out.write_all(head.as_bytes());
                        let _ = out.write_all(part);
                    }
                    _ => {
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
                        );
                        let _ = out.write_all(head.as_bytes());
                        let _ = out.write_all(&body);
                    }
                }
            });
        }
    });
    Server { base, requests }
}

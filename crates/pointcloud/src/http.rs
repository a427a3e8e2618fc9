//! A file over HTTP(S), read with range requests (RFC 9110 §14) as COPC viewers read from object
//! stores: [`HttpFile`] learns the length and checks that the server honours `Range`;
//! [`RangeReader`] is a `Read + Seek` over it (so the `las` crate's COPC reader reads the
//! header, the hierarchy and each node's chunk through it), fetching whole blocks of
//! [`BLOCK`] bytes, each run of missing blocks in one request, into a cache shared by every
//! reader of the file (least recently used blocks dropped beyond its capacity). Requests,
//! bytes and cache hits are counted for the side panel and the report.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::PointCloudError;

/// Bytes per cached block (and the smallest request).
pub(crate) const BLOCK: u64 = 64 << 10;
/// Default cache capacity, bytes.
pub const CACHE_BYTES: u64 = 256 << 20;
/// Time limit of one request.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Counters of one file's traffic.
#[derive(Debug, Default)]
pub struct HttpStats {
    /// Range requests sent.
    pub requests: AtomicU64,
    /// Bytes received.
    pub bytes: AtomicU64,
    /// Blocks served from the cache.
    pub hits: AtomicU64,
    /// Blocks fetched.
    pub misses: AtomicU64,
}

struct Cache {
    blocks: HashMap<u64, (Arc<Vec<u8>>, u64)>,
    tick: u64,
    bytes: u64,
    capacity: u64,
}

/// A remote file (see the module docs).
pub struct HttpFile {
    url: String,
    len: u64,
    agent: ureq::Agent,
    cache: Mutex<Cache>,
    /// Traffic so far.
    pub stats: HttpStats,
}

fn http_error(url: &str, reason: impl std::fmt::Display) -> PointCloudError {
    PointCloudError::Http {
        url: url.to_string(),
        reason: vizdeck_base::text::one_line(&reason.to_string()),
    }
}

/// Whether `s` is an `http://` or `https://` URL.
pub fn is_url(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l.starts_with("http://") || l.starts_with("https://")
}

impl HttpFile {
    /// Opens `url`: one request for its first byte, which must come back as `206 Partial
    /// Content` with the total length; `cache_bytes` bounds the block cache.
    ///
    /// # Errors
    ///
    /// [`PointCloudError::Http`] naming the URL: unreachable, an HTTP error status, or a server
    /// that answers without range support (`200` with the whole file, or no length).
    pub fn open(url: &str, cache_bytes: u64) -> Result<Arc<HttpFile>, PointCloudError> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .build()
            .into();
        let resp = agent
            .get(url)
            .header("Range", "bytes=0-0")
            .call()
            .map_err(|e| http_error(url, e))?;
        let status = resp.status().as_u16();
        if status == 200 {
            return Err(http_error(
                url,
                "the server does not support range requests (it answered 200 with the whole \
                 file to a Range request; COPC streaming needs 206 Partial Content)",
            ));
        }
        if status != 206 {
            return Err(http_error(
                url,
                format!(
                    "HTTP {status} {}",
                    resp.status().canonical_reason().unwrap_or("")
                ),
            ));
        }
        let len = resp
            .headers()
            .get("content-range")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit('/').next())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                http_error(
                    url,
                    "the server's 206 answer has no total length (Content-Range: bytes 0-0/LEN)",
                )
            })?;
        let file = HttpFile {
            url: url.to_string(),
            len,
            agent,
            cache: Mutex::new(Cache {
                blocks: HashMap::new(),
                tick: 0,
                bytes: 0,
                capacity: cache_bytes.max(BLOCK),
            }),
            stats: HttpStats::default(),
        };
        file.stats.requests.fetch_add(1, Ordering::Relaxed);
        Ok(Arc::new(file))
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The traffic as report metrics.
    pub fn metrics(&self) -> serde_json::Value {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        serde_json::json!({
            "url": self.url,
            "file_bytes": self.len,
            "requests": get(&self.stats.requests),
            "bytes_received": get(&self.stats.bytes),
            "cache_hits": get(&self.stats.hits),
            "cache_misses": get(&self.stats.misses),
            "cached_bytes": self.cached_bytes(),
        })
    }

    /// Bytes held by the cache.
    pub fn cached_bytes(&self) -> u64 {
        self.cache.lock().map(|c| c.bytes).unwrap_or(0)
    }

    /// Blocks `first..=last`, from the cache or fetched (runs of missing blocks one request
    /// each).
    fn blocks(&self, first: u64, last: u64) -> std::io::Result<Vec<Arc<Vec<u8>>>> {
        let mut out: Vec<Option<Arc<Vec<u8>>>> = {
            let mut c = self
                .cache
                .lock()
                .map_err(|_| std::io::Error::other("cache poisoned"))?;
            c.tick += 1;
            let tick = c.tick;
            (first..=last)
                .map(|b| {
                    c.blocks.get_mut(&b).map(|(data, used)| {
                        *used = tick;
                        data.clone()
                    })
                })
                .collect()
        };
        let hits = out.iter().filter(|b| b.is_some()).count() as u64;
        self.stats.hits.fetch_add(hits, Ordering::Relaxed);
        let mut i = 0;
        while i < out.len() {
            if out[i].is_some() {
                i += 1;
                continue;
            }
            let mut j = i;
            while j + 1 < out.len() && out[j + 1].is_none() {
                j += 1;
            }
            let start = (first + i as u64) * BLOCK;
            let end = ((first + j as u64 + 1) * BLOCK).min(self.len);
            let data = self.fetch(start, end)?;
            let mut c = self
                .cache
                .lock()
                .map_err(|_| std::io::Error::other("cache poisoned"))?;
            for (k, chunk) in data.chunks(BLOCK as usize).enumerate() {
                let block = Arc::new(chunk.to_vec());
                out[i + k] = Some(block.clone());
                c.tick += 1;
                let tick = c.tick;
                c.bytes += block.len() as u64;
                if let Some((old, _)) = c.blocks.insert(first + (i + k) as u64, (block, tick)) {
                    c.bytes -= old.len() as u64;
                }
            }
            while c.bytes > c.capacity {
                let Some((&oldest, _)) = c.blocks.iter().min_by_key(|(_, (_, used))| *used) else {
                    break;
                };
                if let Some((old, _)) = c.blocks.remove(&oldest) {
                    c.bytes -= old.len() as u64;
                }
            }
            self.stats
                .misses
                .fetch_add((j - i + 1) as u64, Ordering::Relaxed);
            i = j + 1;
        }
        out.into_iter()
            .map(|b| b.ok_or_else(|| std::io::Error::other("block missing after fetch")))
            .collect()
    }

    /// Bytes `start..end` in one range request.
    fn fetch(&self, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
        let want = end - start;
        let mut resp = self
            .agent
            .get(&self.url)
            .header("Range", format!("bytes={start}-{}", end - 1))
            .call()
            .map_err(|e| std::io::Error::other(format!("{}: {e}", self.url)))?;
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let status = resp.status().as_u16();
        if status != 206 {
            return Err(std::io::Error::other(format!(
                "{}: HTTP {status} to a range request for bytes {start}-{}",
                self.url,
                end - 1
            )));
        }
        let data = resp
            .body_mut()
            .with_config()
            .limit(want + 1)
            .read_to_vec()
            .map_err(|e| std::io::Error::other(format!("{}: {e}", self.url)))?;
        self.stats
            .bytes
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        if data.len() as u64 != want {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: asked bytes {start}-{}, got {} bytes",
                    self.url,
                    end - 1,
                    data.len()
                ),
            ));
        }
        Ok(data)
    }
}

/// A `Read + Seek` over an [`HttpFile`] (one per reader; the cache is shared).
pub(crate) struct RangeReader {
    file: Arc<HttpFile>,
    pos: u64,
}

impl RangeReader {
    /// A reader at the start of `file`.
    pub fn new(file: Arc<HttpFile>) -> RangeReader {
        RangeReader { file, pos: 0 }
    }
}

impl Read for RangeReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() || self.pos >= self.file.len {
            return Ok(0);
        }
        let end = (self.pos + buf.len() as u64).min(self.file.len);
        let (first, last) = (self.pos / BLOCK, (end - 1) / BLOCK);
        let blocks = self.file.blocks(first, last)?;
        let mut n = 0usize;
        for (k, b) in blocks.iter().enumerate() {
            let block_start = (first + k as u64) * BLOCK;
            let from = (self.pos + n as u64 - block_start) as usize;
            let take = (b.len().saturating_sub(from)).min((end - self.pos) as usize - n);
            buf[n..n + take].copy_from_slice(&b[from..from + take]);
            n += take;
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for RangeReader {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let next = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.file.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = next.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }
}

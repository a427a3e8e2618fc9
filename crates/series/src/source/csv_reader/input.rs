//! The byte readers under the CSV parser: [`Tail`] waits at the end of a growing file (tail
//! mode), [`Ends`] notes how the input ended so a half-written last row can be told apart.

use super::*;

/// A reader that, at the end of the file, waits for more data instead of ending (tail mode),
/// until `stop` is set.
pub(super) struct Tail<R> {
    pub(super) inner: R,
    pub(super) stop: Arc<AtomicBool>,
}

impl<R: Read> Read for Tail<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.inner.read(buf)?;
            if n > 0 || buf.is_empty() || self.stop.load(Ordering::Relaxed) {
                return Ok(n);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub(super) type CsvInput = Box<dyn Read + Send>;

/// A reader that remembers how many bytes it handed out, the last of them, and whether it
/// reached the end: the CSV reader reads through it so that a last row cut short (no line
/// break at the end of the file) can be told apart.
pub(super) struct Ends<R> {
    pub(super) inner: R,
    /// Bytes handed out.
    pub(super) total: u64,
    /// The last byte handed out.
    pub(super) last: Option<u8>,
    /// A read returned 0 bytes (the end of the input).
    pub(super) eof: bool,
}

impl<R> Ends<R> {
    pub(super) fn new(inner: R) -> Ends<R> {
        Ends {
            inner,
            total: 0,
            last: None,
            eof: false,
        }
    }

    /// The input ended, and not with a line break.
    pub(super) fn ended_mid_line(&self) -> bool {
        self.eof && !matches!(self.last, None | Some(b'\n' | b'\r'))
    }
}

impl<R: Read> Read for Ends<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.total += n as u64;
            self.last = Some(buf[n - 1]);
        } else if !buf.is_empty() {
            self.eof = true;
        }
        Ok(n)
    }
}

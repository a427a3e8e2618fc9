//! A reader whose seeks behave alike on files and on bytes in memory.
//!
//! A header from a stranger can send the `las`/`laz` readers to any offset (a chunk table at
//! byte 2⁶³ + 5, say). A [`std::fs::File`] refuses a seek past `i64::MAX` with the operating
//! system's `EINVAL` ("Invalid argument (os error 22)"), while a [`std::io::Cursor`] accepts it
//! and reads nothing there. [`SeekWithin`] refuses every seek to a position below 0 or above
//! `i64::MAX` itself, with one message, before the inner reader sees it; and a file refuses a
//! read at an offset beyond what its file system allows (EINVAL again, ext4 past 16 TiB) where
//! a cursor reads nothing: [`SeekWithin`] reads nothing past the end it measured when wrapped,
//! without asking the inner reader. The path loader and the byte entry point (the fuzz
//! targets) then give the same result on the same bytes.

use std::io::{self, Read, Seek, SeekFrom};

/// `inner` with seeks checked against the positions a file can take (0 ..= `i64::MAX`).
#[derive(Debug)]
pub(crate) struct SeekWithin<R> {
    inner: R,
    /// The position in bytes from the start, as this wrapper has moved it.
    pos: u64,
    /// The length in bytes, read once when wrapped.
    len: u64,
}

impl<R: Read + Seek> SeekWithin<R> {
    /// Wraps `inner`, positioned at its start.
    ///
    /// # Errors
    ///
    /// The inner reader's, when it cannot seek to its end or back to the start.
    pub fn new(mut inner: R) -> io::Result<Self> {
        let len = inner.seek(SeekFrom::End(0))?;
        inner.seek(SeekFrom::Start(0))?;
        Ok(SeekWithin { inner, pos: 0, len })
    }
}

impl<R: Read> Read for SeekWithin<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // Past the end: nothing, as a cursor (the inner reader stays where it was).
        if self.pos >= self.len {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for SeekWithin<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target: i128 = match to {
            SeekFrom::Start(p) => i128::from(p),
            SeekFrom::Current(d) => i128::from(self.pos) + i128::from(d),
            SeekFrom::End(d) => i128::from(self.len) + i128::from(d),
        };
        if !(0..=i128::from(i64::MAX)).contains(&target) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a seek to byte {target}, outside any file"),
            ));
        }
        // In range by the check above.
        let target = target as u64;
        // Past the end the inner reader is not moved: reads there give nothing (see `read`).
        self.pos = if target <= self.len {
            self.inner.seek(SeekFrom::Start(target))?
        } else {
            target
        };
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeks_outside_a_file_are_refused_alike_for_files_and_bytes() {
        let bytes: Vec<u8> = (0u8..100).collect();
        let path = std::env::temp_dir().join(format!("vizdeck-seek-within-{}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let mut file = SeekWithin::new(std::fs::File::open(&path).unwrap()).unwrap();
        let mut mem = SeekWithin::new(io::Cursor::new(bytes)).unwrap();
        for to in [
            SeekFrom::Start(1 << 63),
            SeekFrom::Start(u64::MAX),
            SeekFrom::End(-101),
            SeekFrom::Current(-1),
        ] {
            let a = file.seek(to).unwrap_err().to_string();
            let b = mem.seek(to).unwrap_err().to_string();
            assert_eq!(a, b, "{to:?}");
        }
        // Inside the file, and past its end (both readers read nothing there), as the inner ones.
        for (to, want) in [
            (SeekFrom::Start(10), 10u64),
            (SeekFrom::Current(5), 15),
            (SeekFrom::End(-1), 99),
            (SeekFrom::Start(1000), 1000),
            (SeekFrom::Start(1 << 62), 1 << 62),
        ] {
            assert_eq!(file.seek(to).unwrap(), want);
            assert_eq!(mem.seek(to).unwrap(), want);
        }
        // Far past the end (where a file system refuses a read) both read nothing.
        let mut buf = [0u8; 8];
        assert_eq!(file.read(&mut buf).unwrap(), 0);
        assert_eq!(mem.read(&mut buf).unwrap(), 0);
        let mut one = [0u8; 1];
        file.seek(SeekFrom::Start(42)).unwrap();
        mem.seek(SeekFrom::Start(42)).unwrap();
        file.read_exact(&mut one).unwrap();
        assert_eq!(one[0], 42);
        mem.read_exact(&mut one).unwrap();
        assert_eq!(one[0], 42);
        assert_eq!(file.stream_position().unwrap(), 43);
        std::fs::remove_file(&path).unwrap();
    }
}

//! The lenient WAV header reader ([`repair_wav`]): a `RIFF....WAVE` file is read as players
//! read it (untrusted sizes, odd `fmt ` chunks, missing pad bytes) and rewritten in memory in
//! the canonical form symphonia's strict reader accepts. Kept apart from the decode because it
//! is the one part of the audio crate that parses untrusted bytes by hand (the `wav_header`
//! fuzz target drives it).

use std::path::Path;

use super::AudioError;

/// `WAVE_FORMAT_PCM`.
const TAG_PCM: u16 = 0x0001;
/// `WAVE_FORMAT_IEEE_FLOAT`.
const TAG_FLOAT: u16 = 0x0003;
/// `WAVE_FORMAT_ALAW`.
const TAG_ALAW: u16 = 0x0006;
/// `WAVE_FORMAT_MULAW`.
const TAG_MULAW: u16 = 0x0007;
/// `WAVE_FORMAT_EXTENSIBLE`.
const TAG_EXTENSIBLE: u16 = 0xFFFE;
/// Bytes 2..16 of the `KSDATAFORMAT_SUBTYPE_*` GUIDs of the standard sub-formats (PCM, IEEE
/// float, A-law, µ-law: `0000XXXX-0000-0010-8000-00AA00389B71`), as stored in a `fmt ` chunk.
const KSDATAFORMAT_GUID_TAIL: [u8; 14] = [
    0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
];

/// A RIFF/WAVE file rewritten by [`repair_wav`] into the canonical layout symphonia reads.
#[derive(Debug)]
pub struct RepairedWav {
    /// `RIFF` (true size) `WAVE`, a normalised `fmt ` chunk, and a `data` chunk holding the whole
    /// frames (blocks) the file has; nothing else.
    pub bytes: Vec<u8>,
    /// Frames the header's data size declares, for PCM, float, A-law and µ-law data; `None`
    /// when the size is 0 or 0xFFFFFFFF (streamed: "to the end of the file") and for block
    /// codecs (ADPCM), whose frame count symphonia takes from the repaired data size.
    pub declared_frames: Option<u64>,
    /// Whether the codec stores samples one frame at a time (PCM, float, A-law, µ-law) rather
    /// than in blocks (ADPCM).
    pub pcm_like: bool,
    /// Bytes of one frame (PCM-like codecs) or one block (ADPCM).
    pub block: u64,
    /// Bytes of an incomplete last frame or block that were left out (0 if none).
    pub partial: u64,
    /// Whether the data chunk declared more bytes than the file holds.
    pub overrun: bool,
    /// One line when the header's RIFF size or a streamed data size (0, 0xFFFFFFFF) did not
    /// say where the file ends, so it was read to its end: `"RIFF size says 4294967288 bytes
    /// (0xFFFFFFF8), the file holds 2036 after the RIFF header: read to the end of the file"`.
    pub size_note: Option<String>,
}

/// `"N bytes"`, with the hexadecimal form for sizes of 2³¹ and more (−8 as a signed size is
/// `4294967288 bytes (0xFFFFFFF8)`).
fn size_text(n: u32) -> String {
    if n > i32::MAX as u32 {
        format!("{n} bytes (0x{n:08X})")
    } else {
        format!("{n} bytes")
    }
}

/// Whether `id` looks like a RIFF chunk id (four printable ASCII bytes).
fn looks_like_id(id: &[u8]) -> bool {
    id.len() == 4 && id.iter().all(|b| (0x20..0x7F).contains(b))
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Reads the RIFF chunks of a WAV file (`file` starts with `RIFF....WAVE`) leniently, as players
/// do, and writes the canonical file symphonia's strict reader accepts.
///
/// Accepted, beyond what symphonia 0.6 reads itself:
/// - **RIFF size**: not trusted (players do not). Too small (e.g. 8 short, so the data chunk
///   "exceeds its parent"), 0, 0xFFFFFFFF, 0xFFFFFFF8 (−8) or past the end of the file all read
///   the same, to the end of the file, with a one-line note ([`RepairedWav::size_note`]); a RIFF
///   size that ends before chunks after the data (a `LIST` it does not count) is no matter.
/// - **data size**: 0 or 0xFFFFFFFF mean streamed: the data runs to the end of the file (noted
///   in the same line).
///   Larger than what the file holds: the bytes present are read and the shortfall is reported
///   (truncated). A size that ends inside a frame: the whole frames are read and the partial one
///   is reported. Chunks after the data chunk are ignored.
/// - **`fmt ` chunk**: any size ≥ 16 for PCM (tag 1) and IEEE float (tag 3), whatever the cbSize
///   field says (16, 18 and 40 are the usual ones); A-law/µ-law (tags 6/7) with 16 or more;
///   `WAVE_FORMAT_EXTENSIBLE` (tag 0xFFFE) with any cbSize ≥ 22 and ≥ 40 bytes present (only
///   the first 22 extension bytes are read), `wValidBitsPerSample` 0 read as the container
///   width, and for float sub-formats as equal to it. Other tags (ADPCM) pass unchanged.
/// - **Padding**: an odd-sized chunk without its pad byte (a common writer bug) is detected when
///   the next chunk id is found unpadded.
///
/// # Errors
///
/// One line (without the path, which the caller adds): the file ends inside the header; a chunk
/// before the data runs past the end of the file; no `fmt ` chunk before the data; no `data`
/// chunk; a `fmt ` chunk under 16 bytes; `WAVE_FORMAT_EXTENSIBLE` with under 40 bytes or a
/// cbSize under 22, or more than 18 channels with a channel mask that does not place them all
/// (a mismatched mask is otherwise set to the first `channels` positions); PCM-like frames over
/// 65535 bytes (channels × bytes per sample). Chunk ids
/// are quoted with non-printable bytes escaped (`\xd1`, `\r`). Zero channels and a 0 Hz rate are [`AudioError::ZeroChannels`] and
/// [`AudioError::ZeroSampleRate`].
pub fn repair_wav(file: &[u8], path: &Path) -> Result<RepairedWav, AudioError> {
    let bad = |reason: String| AudioError::MalformedWav {
        path: path.to_path_buf(),
        reason,
    };
    let len = file.len();
    let mut pos = 12usize;
    let mut fmt: Option<&[u8]> = None;
    let (data_start, data_declared) = loop {
        if pos + 8 > len {
            return Err(bad(match fmt {
                None if pos == 12 => format!("the file ends inside the header ({len} bytes)"),
                None => "no 'fmt ' chunk and no 'data' chunk".to_string(),
                Some(_) => "no 'data' chunk (the file ends after the header)".to_string(),
            }));
        }
        let id = &file[pos..pos + 4];
        let size = le32(file, pos + 4);
        let body = pos + 8;
        if id == b"data" {
            break (body, size);
        }
        // One line whatever the bytes: `d-\xd1\r`.
        let name = id.escape_ascii().to_string();
        let end = body as u64 + u64::from(size);
        if end > len as u64 {
            return Err(bad(format!(
                "chunk '{name}' at byte {pos} declares {size} bytes, past the end of the file \
                 ({len} bytes)"
            )));
        }
        let end = end as usize;
        if id == b"fmt " {
            if size < 16 {
                return Err(bad(format!(
                    "the 'fmt ' chunk has {size} bytes (at least 16 needed)"
                )));
            }
            fmt = Some(&file[body..end]);
        }
        // Chunks are word-aligned; some writers leave out the pad byte after an odd size.
        pos = if size % 2 == 1
            && !file.get(end + 1..end + 5).is_some_and(looks_like_id)
            && file.get(end..end + 4).is_some_and(looks_like_id)
        {
            end
        } else {
            end + (size as usize % 2)
        };
    };
    let Some(fmt) = fmt else {
        return Err(bad("no 'fmt ' chunk before the 'data' chunk".to_string()));
    };
    let tag = le16(fmt, 0);
    let channels = le16(fmt, 2);
    let sample_rate = le32(fmt, 4);
    let block_align = le16(fmt, 12);
    let bits = le16(fmt, 14);
    if channels == 0 {
        return Err(AudioError::ZeroChannels {
            path: path.to_path_buf(),
        });
    }
    if sample_rate == 0 {
        return Err(AudioError::ZeroSampleRate {
            path: path.to_path_buf(),
        });
    }
    let mut out_fmt: Vec<u8> = fmt[..16].to_vec();
    let codec_tag = match tag {
        TAG_PCM | TAG_FLOAT => tag,
        TAG_ALAW | TAG_MULAW => {
            out_fmt.extend_from_slice(&0u16.to_le_bytes());
            tag
        }
        TAG_EXTENSIBLE => {
            if fmt.len() < 40 {
                return Err(bad(format!(
                    "WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk has {} bytes (at least 40 needed)",
                    fmt.len()
                )));
            }
            let cb = le16(fmt, 16);
            if cb < 22 {
                return Err(bad(format!(
                    "WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk has cbSize {cb} (at least 22 needed)"
                )));
            }
            let sub = le16(fmt, 24);
            let mut valid = le16(fmt, 18);
            if valid == 0 || sub == TAG_FLOAT {
                valid = bits;
            }
            out_fmt.extend_from_slice(&22u16.to_le_bytes());
            out_fmt.extend_from_slice(&valid.to_le_bytes());
            out_fmt.extend_from_slice(&fmt[20..40]);
            // A channel mask that does not place exactly `channels` speakers is fixed up by
            // symphonia with shifts that overflow (a panic in debug builds) when the mask's top
            // bit is set or 32 or more are missing: for the standard sub-formats it is set here
            // to the first `channels` positions, which is what symphonia makes of a mask of 0.
            // Masks place at most 18 standard speakers, the most symphonia reads.
            let mask = le32(fmt, 20);
            if fmt[26..40] == KSDATAFORMAT_GUID_TAIL && mask.count_ones() != u32::from(channels) {
                if channels > 18 {
                    return Err(bad(format!(
                        "WAVE_FORMAT_EXTENSIBLE with {channels} channels and a channel mask of \
                         {} (0x{mask:08x}); a mask places at most 18",
                        mask.count_ones()
                    )));
                }
                let fixed = (1u32 << channels) - 1;
                out_fmt[20..24].copy_from_slice(&fixed.to_le_bytes());
            }
            sub
        }
        _ => {
            out_fmt = fmt.to_vec();
            tag
        }
    };
    // Frame size as symphonia computes it for sample codecs; the block for the others.
    let pcm_like = matches!(codec_tag, TAG_PCM | TAG_FLOAT | TAG_ALAW | TAG_MULAW);
    // symphonia computes the block align `channels × bytes per sample` in 16 bits (and panics on
    // the overflow in debug builds): a frame that large cannot be described by a WAV header.
    let frame_bytes = u32::from(channels) * u32::from(bits / 8);
    if pcm_like && frame_bytes > u32::from(u16::MAX) {
        return Err(bad(format!(
            "{channels} channels of {bits}-bit samples make a frame of {frame_bytes} bytes, \
             more than the 65535 a WAV header can describe"
        )));
    }
    let block = if pcm_like {
        u64::from(channels) * u64::from(bits / 8)
    } else {
        u64::from(block_align)
    };
    let available = (len - data_start) as u64;
    let streamed = data_declared == 0 || data_declared == u32::MAX;
    let declared = if streamed {
        available
    } else {
        u64::from(data_declared)
    };
    let present = declared.min(available);
    let partial = if block > 0 { present % block } else { 0 };
    let kept = present - partial;
    // A RIFF chunk holds at most u32::MAX bytes: longer streamed data is cut to whole blocks.
    // An odd-sized `fmt ` chunk (a pass-through tag) is followed by its pad byte.
    let fmt_pad = out_fmt.len() as u64 % 2;
    let kept = if kept + 36 + out_fmt.len() as u64 + fmt_pad > u64::from(u32::MAX) {
        let max = u64::from(u32::MAX) - 36 - out_fmt.len() as u64 - fmt_pad;
        max - if block > 0 { max % block } else { 0 }
    } else {
        kept
    };
    let kept_usize = kept as usize;
    let mut bytes = Vec::with_capacity(44 + out_fmt.len() + kept_usize + 1);
    bytes.extend_from_slice(b"RIFF");
    let riff = 4 + 8 + out_fmt.len() as u64 + fmt_pad + 8 + kept + (kept & 1);
    bytes.extend_from_slice(&(riff as u32).to_le_bytes());
    bytes.extend_from_slice(b"WAVEfmt ");
    bytes.extend_from_slice(&(out_fmt.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&out_fmt);
    if fmt_pad == 1 {
        bytes.push(0);
    }
    bytes.extend_from_slice(b"data");
    bytes.extend_from_slice(&(kept as u32).to_le_bytes());
    bytes.extend_from_slice(&file[data_start..data_start + kept_usize]);
    if kept & 1 == 1 {
        bytes.push(0);
    }
    // The sizes that did not say where the file ends (issue 34: they were read without a word).
    let riff_declared = le32(file, 4);
    let riff_end = 8 + u64::from(riff_declared);
    let mut size_notes = Vec::new();
    if riff_end > len as u64 || riff_end < (data_start as u64 + present) {
        size_notes.push(format!(
            "RIFF size says {}, the file holds {} after the RIFF header",
            size_text(riff_declared),
            len - 8
        ));
    }
    if streamed && available > 0 {
        size_notes.push(format!(
            "data size says {} (streamed), the file holds {available} bytes of data",
            size_text(data_declared)
        ));
    }
    let size_note = (!size_notes.is_empty())
        .then(|| format!("{}: read to the end of the file", size_notes.join("; ")));
    Ok(RepairedWav {
        bytes,
        declared_frames: (pcm_like && !streamed && block > 0).then(|| declared / block),
        pcm_like,
        block,
        partial,
        overrun: declared > available,
        size_note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the wav_header fuzz target: an odd-sized `fmt ` chunk passed through (a tag the
    /// pre-parser does not rewrite) lost its pad byte in the canonical file, so the `data` chunk
    /// started one byte early and symphonia could not find it.
    #[test]
    fn odd_fmt_chunk_keeps_its_pad_byte() {
        let mut v = b"RIFF\0\0\0\0WAVEfmt ".to_vec();
        v.extend_from_slice(&17u32.to_le_bytes());
        // Tag 0x0201 (passed through unchanged), block align 1 (every data byte is kept).
        let mut fmt: Vec<u8> = (1..=17).collect();
        fmt[12..14].copy_from_slice(&1u16.to_le_bytes());
        v.extend_from_slice(&fmt);
        v.push(0); // pad
        v.extend_from_slice(b"data\x04\0\0\0\x0a\x0b\x0c\x0d");
        let w = repair_wav(&v, Path::new("x.wav")).unwrap();
        // RIFF size: "WAVE" 4 + fmt 8 + 17 + pad 1 + data 8 + 4 = 42.
        let mut want = b"RIFF\x2a\0\0\0WAVEfmt \x11\0\0\0".to_vec();
        want.extend_from_slice(&fmt);
        want.push(0);
        want.extend_from_slice(b"data\x04\0\0\0\x0a\x0b\x0c\x0d");
        assert_eq!(w.bytes, want);
    }
}

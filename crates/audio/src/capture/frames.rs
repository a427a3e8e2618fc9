//! The body of the real-time data callback: each interleaved frame of any cpal sample type to
//! one mono `f32` (a chosen channel or the mean), pushed into the ring. Real-time safe: no
//! allocation, lock, log or blocking call.

use cpal::{FromSample, Sample};
use rtrb::Producer;

/// Converts one sample of any cpal sample type to `f32` in [-1, 1].
///
/// Integer formats divide by 2^(bits−1) (`i16::MIN` → −1.0, `i16::MAX` → 32767/32768); unsigned
/// formats are centred on their midpoint first (`u8` 128 → 0.0, 255 → 127/128); `f32` passes
/// through, `f64` is rounded to `f32`. Formulas: `dasp_sample::conv`.
#[inline]
pub fn sample_to_f32<T: Sample>(s: T) -> f32
where
    f32: FromSample<T>,
{
    f32::from_sample(s)
}

/// The body of the data callback for [`ChannelChoice::Mix`](crate::ChannelChoice::Mix): `push_frames(data, channels, None,
/// producer)`.
pub fn push_mono_frames<T: Sample>(data: &[T], channels: usize, producer: &mut Producer<f32>) -> u64
where
    f32: FromSample<T>,
{
    push_frames(data, channels, None, producer)
}

/// The body of the data callback: turns each frame of `channels` interleaved samples into one
/// mono `f32` — channel `pick` (0-based) when given, else the mean of the channels — and pushes
/// it into `producer`. Returns how many mono samples did not fit (the newest ones of `data`).
/// A trailing partial frame is ignored; `channels == 0`, or `pick ≥ channels`, pushes nothing and
/// returns 0 (callers check the channel when opening).
///
/// Real-time safe: no allocation, lock, log or blocking call.
pub fn push_frames<T: Sample>(
    data: &[T],
    channels: usize,
    pick: Option<usize>,
    producer: &mut Producer<f32>,
) -> u64
where
    f32: FromSample<T>,
{
    if channels == 0 || pick.is_some_and(|c| c >= channels) {
        return 0;
    }
    let frames = data.len() / channels;
    let room = producer.slots();
    let n = frames.min(room);
    if n > 0 {
        let frames_in = data[..n * channels].chunks_exact(channels);
        if let Ok(chunk) = producer.write_chunk_uninit(n) {
            match pick {
                Some(c) => {
                    chunk.fill_from_iter(frames_in.map(|frame| sample_to_f32(frame[c])));
                }
                None => {
                    let inv = 1.0 / channels as f32;
                    chunk.fill_from_iter(frames_in.map(|frame| {
                        let mut sum = 0.0f32;
                        for &s in frame {
                            sum += sample_to_f32(s);
                        }
                        sum * inv
                    }));
                }
            }
        }
    }
    (frames - n) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtrb::{Consumer, RingBuffer};

    #[test]
    fn integer_and_float_conversion() {
        assert_eq!(sample_to_f32(i16::MIN), -1.0);
        assert_eq!(sample_to_f32(0i16), 0.0);
        assert_eq!(sample_to_f32(i16::MAX), 32767.0 / 32768.0);
        assert_eq!(sample_to_f32(i8::MIN), -1.0);
        assert_eq!(sample_to_f32(i32::MIN), -1.0);
        assert_eq!(sample_to_f32(i64::MIN), -1.0);
        assert_eq!(sample_to_f32(cpal::I24::new(-(1 << 23)).unwrap()), -1.0);
        assert_eq!(sample_to_f32(cpal::I24::new(1 << 22).unwrap()), 0.5);
        let x = 0.123_456_789_f64;
        assert_eq!(sample_to_f32(x), x as f32);
        assert_eq!(sample_to_f32(-0.375_f64), -0.375);
        assert_eq!(sample_to_f32(-0.75_f32), -0.75);
    }

    #[test]
    fn unsigned_conversion_is_centred() {
        assert_eq!(sample_to_f32(128u8), 0.0);
        assert_eq!(sample_to_f32(0u8), -1.0);
        let top = sample_to_f32(255u8);
        assert_eq!(top, 127.0 / 128.0);
        assert!((top - 1.0).abs() < 0.01);
        assert_eq!(sample_to_f32(32768u16), 0.0);
        assert_eq!(sample_to_f32(0u16), -1.0);
        assert_eq!(sample_to_f32(1u32 << 31), 0.0);
        assert_eq!(sample_to_f32(0u64), -1.0);
        assert_eq!(sample_to_f32(cpal::U24::new(1 << 23).unwrap()), 0.0);
    }

    fn drain(c: &mut Consumer<f32>) -> Vec<f32> {
        let mut v = Vec::new();
        while let Ok(x) = c.pop() {
            v.push(x);
        }
        v
    }

    #[test]
    fn callback_mixes_interleaved_stereo_i16_to_mono() {
        let (mut p, mut c) = RingBuffer::new(16);
        // Frames: (-32768, 0) → -0.5; (16384, 16384) → 0.5; (32767, -32768) → -1/65536.
        let data: [i16; 6] = [i16::MIN, 0, 16384, 16384, i16::MAX, i16::MIN];
        let lost = push_mono_frames(&data, 2, &mut p);
        assert_eq!(lost, 0);
        assert_eq!(drain(&mut c), vec![-0.5, 0.5, -1.0 / 65536.0]);
    }

    #[test]
    fn callback_mixes_u8_and_counts_what_does_not_fit() {
        let (mut p, mut c) = RingBuffer::new(2);
        // 3 channels of u8; frame means: (128,128,128) → 0; (0,0,0) → -1; (255,...) → 127/128.
        let data: [u8; 9] = [128, 128, 128, 0, 0, 0, 255, 255, 255];
        let lost = push_mono_frames(&data, 3, &mut p);
        assert_eq!(lost, 1, "ring of 2 takes 2 of 3 frames");
        assert_eq!(drain(&mut c), vec![0.0, -1.0]);
        // Partial trailing frame ignored, zero channels pushes nothing.
        assert_eq!(push_mono_frames(&[0.5f32, 0.25, 0.1], 2, &mut p), 0);
        assert_eq!(push_mono_frames(&[0.5f32], 0, &mut p), 0);
        assert_eq!(drain(&mut c), vec![0.375]);
    }
}

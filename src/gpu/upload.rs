//! CPU → GPU uploads through double-buffered (ping-pong) buffers.
//!
//! Frame `n` writes slot `n % 2` while the GPU may still read slot `(n - 1) % 2` of the frame
//! before, so a write never targets a buffer that in-flight work reads (wgpu orders
//! `queue.write_buffer` before the next submit anyway; two slots keep bind groups stable and let
//! the previous frame's data stay readable, e.g. for interpolation).

/// Number of slots in a ping-pong set.
pub const SLOTS: usize = 2;

/// A pair of GPU buffers of one usage, written alternately, grown by doubling when a write does not
/// fit (which recreates both and bumps [`PingPong::generation`] so users rebuild bind groups).
pub struct PingPong {
    label: &'static str,
    usage: wgpu::BufferUsages,
    capacity: u64,
    buffers: [wgpu::Buffer; SLOTS],
    generation: u64,
    written: [u64; SLOTS],
}

impl PingPong {
    /// Creates two buffers of `capacity` bytes (rounded up to 256) with `usage | COPY_DST`.
    pub fn new(
        device: &wgpu::Device,
        label: &'static str,
        usage: wgpu::BufferUsages,
        capacity: u64,
    ) -> PingPong {
        let capacity = capacity.max(256).next_multiple_of(256);
        let usage = usage | wgpu::BufferUsages::COPY_DST;
        PingPong {
            label,
            usage,
            capacity,
            buffers: Self::make(device, label, usage, capacity),
            generation: 0,
            written: [0; SLOTS],
        }
    }

    fn make(
        device: &wgpu::Device,
        label: &'static str,
        usage: wgpu::BufferUsages,
        capacity: u64,
    ) -> [wgpu::Buffer; SLOTS] {
        std::array::from_fn(|i| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("{label}[{i}]")),
                size: capacity,
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// The slot frame `frame` writes: `frame % 2`.
    pub fn slot(frame: u64) -> usize {
        (frame % SLOTS as u64) as usize
    }

    /// Writes `bytes` at offset 0 of slot `frame % 2`, growing (doubling) both buffers first if
    /// needed. Returns the slot written.
    pub fn write(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: u64,
        bytes: &[u8],
    ) -> usize {
        let need = (bytes.len() as u64).next_multiple_of(4);
        if need > self.capacity {
            let mut cap = self.capacity;
            while cap < need {
                cap *= 2;
            }
            let max = device.limits().max_buffer_size;
            self.capacity = cap.min(max.max(need));
            self.buffers = Self::make(device, self.label, self.usage, self.capacity);
            self.generation += 1;
        }
        let slot = Self::slot(frame);
        if !bytes.is_empty() {
            if bytes.len().is_multiple_of(4) {
                queue.write_buffer(&self.buffers[slot], 0, bytes);
            } else {
                let mut padded = bytes.to_vec();
                padded.resize(need as usize, 0);
                queue.write_buffer(&self.buffers[slot], 0, &padded);
            }
        }
        self.written[slot] = bytes.len() as u64;
        slot
    }

    /// The buffer of `slot`.
    pub fn buffer(&self, slot: usize) -> &wgpu::Buffer {
        &self.buffers[slot]
    }

    /// Bytes last written into `slot`.
    pub fn written(&self, slot: usize) -> u64 {
        self.written[slot]
    }

    /// Capacity of each buffer in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Incremented whenever the buffers were recreated (bind groups must be rebuilt).
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

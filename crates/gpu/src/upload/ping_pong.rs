//! Double-buffered (ping-pong) GPU buffers written through the frame's uploader.

use super::SLOTS;

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

    /// Writes `bytes` at offset 0 of slot `frame.frame() % 2` through the frame's uploader
    /// (counted, in the frame's strategy), growing (doubling) both buffers first if needed.
    /// Returns the slot written.
    pub fn write(&mut self, frame: &mut crate::frame::GpuFrame<'_>, bytes: &[u8]) -> usize {
        let device = frame.device();
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
        let slot = Self::slot(frame.frame());
        frame.write(&self.buffers[slot], 0, bytes);
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

// Time series: the new samples of every series mirrored in one page, in one dispatch. The CPU
// stages the frame's new samples of all series (f32 bits and the running count of valid samples)
// in one buffer; job j copies `count` of them from `src` to the series' place `dst` in the page's
// samples. Thread t serves the job whose [start, start + count) holds it.
//
// Preludes prepended by the registry (src/shaders.rs): common/timeseries.wgsl,
// common/timeseries_jobs.wgsl.

// `d`, `jobs` and `job_of` (bindings 0 and 1): common/timeseries_jobs.wgsl.
// (value bits, valid count up to and including the sample)
@group(0) @binding(2) var<storage, read> staged: array<vec2<u32>>;
// The page (group 1): `samples` and `pyramid`, declared in common/timeseries.wgsl.

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_index(gid, nwg);
    if t >= d.total {
        return;
    }
    let job = job_of(t);
    let k = t - job.start;
    samples[job.dst + k] = staged[job.src + k];
}

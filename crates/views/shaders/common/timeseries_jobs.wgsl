// Time series: the job table of the page passes that spread one dispatch over many series
// (append, pyramid build). Job j serves threads [start, start + count); `d` says which jobs
// this dispatch runs and how many threads they take in all.
//
// Preludes before it: common/timeseries.wgsl (Dispatch, Job).

@group(0) @binding(0) var<uniform> d: Dispatch;
@group(0) @binding(1) var<storage, read> jobs: array<Job>;

// The job of thread t: the last of jobs[d.first .. d.first + d.count) with start <= t.
fn job_of(t: u32) -> Job {
    var lo = d.first;
    var hi = d.first + d.count - 1u;
    while lo < hi {
        let mid = hi - (hi - lo) / 2u;
        if jobs[mid].start <= t {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return jobs[lo];
}

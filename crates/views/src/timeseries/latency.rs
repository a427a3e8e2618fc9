//! Publish → present latency of a network source's messages: the present's wall-clock time less
//! each message's payload time (its `--time-field`, when that is wall-clock time), in a
//! histogram of 1 µs to 1 h. What the histogram cannot hold honestly is counted apart: payload
//! times after the present (the publisher's clock ahead of ours), recorded as 1 µs, with the
//! largest lead; latencies beyond an hour, recorded as an hour.

/// Highest latency the histogram holds, µs (1 h).
pub(crate) const LATENCY_MAX_US: u64 = 3_600_000_000;

/// Publish → present latencies and what was clamped to fit them (see the module docs).
pub struct Latency {
    /// Latencies, µs, 1 to [`LATENCY_MAX_US`], 3 significant digits.
    hist: hdrhistogram::Histogram<u64>,
    /// Messages whose payload time was after the present, recorded as 1 µs.
    ahead_of_clock: u64,
    /// The largest of their leads (payload time − present), ns.
    max_lead_ns: i128,
    /// Messages whose latency passed [`LATENCY_MAX_US`], recorded as that.
    beyond_bound: u64,
}

impl Latency {
    /// An empty record (`None` only if hdrhistogram refused its bounds, which are fixed).
    pub fn new() -> Option<Latency> {
        let hist = hdrhistogram::Histogram::new_with_bounds(1, LATENCY_MAX_US, 3).ok()?;
        Some(Latency {
            hist,
            ahead_of_clock: 0,
            max_lead_ns: 0,
            beyond_bound: 0,
        })
    }

    /// Records one message: payload time `payload_ns` and present time `present_ns`, both
    /// integer ns since the Unix epoch (any i64: the difference is taken in i128). A latency
    /// below 1 µs is recorded as 1 µs; a negative one (payload after the present) is also
    /// counted as ahead of our clock; one beyond an hour is recorded as an hour and counted.
    pub fn record(&mut self, present_ns: i64, payload_ns: i64) {
        let ns = i128::from(present_ns) - i128::from(payload_ns);
        if ns < 0 {
            self.ahead_of_clock += 1;
            self.max_lead_ns = self.max_lead_ns.max(-ns);
        }
        let us = ns / 1000;
        if us > i128::from(LATENCY_MAX_US) {
            self.beyond_bound += 1;
        }
        let us = us.clamp(1, i128::from(LATENCY_MAX_US)) as u64;
        self.hist.saturating_record(us);
    }

    /// Messages recorded.
    pub fn messages(&self) -> u64 {
        self.hist.len()
    }

    /// The latency at quantile `q` (0 to 1), ms.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        self.hist.value_at_quantile(q) as f64 / 1e3
    }

    /// Messages whose payload time was after the present (recorded as 1 µs).
    pub fn ahead_of_clock(&self) -> u64 {
        self.ahead_of_clock
    }

    /// The largest lead of a payload time over the present, ms (`None` when none was ahead).
    pub fn max_lead_ms(&self) -> Option<f64> {
        (self.ahead_of_clock > 0).then(|| self.max_lead_ns as f64 / 1e6)
    }

    /// Messages whose latency passed an hour (recorded as an hour).
    pub fn beyond_bound(&self) -> u64 {
        self.beyond_bound
    }

    /// The report's `publish_to_present_ms`: `messages`, `p50`, `p99`, `max` (ms), then
    /// `ahead_of_clock` (count), `max_lead_ms` (ms, `null` when none was ahead) and
    /// `beyond_1h` (count).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "messages": self.messages(),
            "p50": self.quantile_ms(0.5),
            "p99": self.quantile_ms(0.99),
            "max": self.hist.max() as f64 / 1e3,
            "ahead_of_clock": self.ahead_of_clock,
            "max_lead_ms": self.max_lead_ms(),
            "beyond_1h": self.beyond_bound,
        })
    }

    /// What was clamped, one line each (empty when nothing was): the publisher's clock ahead,
    /// latencies beyond an hour.
    pub fn notices(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(lead) = self.max_lead_ms() {
            out.push(format!(
                "publisher clock ahead by up to {lead:.0} ms: latency clamped for {} message(s)",
                self.ahead_of_clock
            ));
        }
        if self.beyond_bound > 0 {
            out.push(format!(
                "{} latency(ies) beyond 1 h: recorded as 1 h",
                self.beyond_bound
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000_000_000_000;

    #[test]
    fn ordinary_latencies_are_recorded_in_microseconds() {
        let mut l = Latency::new().unwrap();
        // 2 ms, 1.5 ms, 500 ns (below 1 µs: recorded as 1 µs, not counted as ahead).
        l.record(NOW, NOW - 2_000_000);
        l.record(NOW, NOW - 1_500_000);
        l.record(NOW, NOW - 500);
        assert_eq!(l.messages(), 3);
        assert_eq!(l.ahead_of_clock(), 0);
        assert_eq!(l.max_lead_ms(), None);
        assert_eq!(l.beyond_bound(), 0);
        assert!(l.notices().is_empty());
        let j = l.to_json();
        // 3 significant digits: values below 2048 µs are held exactly.
        assert_eq!(j["max"], 2.0);
        assert_eq!(j["p50"], 1.5);
        assert_eq!(j["ahead_of_clock"], 0);
        assert_eq!(j["max_lead_ms"], serde_json::Value::Null);
    }

    #[test]
    fn payload_times_ahead_of_the_present_are_counted_with_the_largest_lead() {
        let mut l = Latency::new().unwrap();
        l.record(NOW, NOW + 5_000_000_000); // 5 s ahead
        l.record(NOW, NOW + 1_250_000_000); // 1.25 s ahead
        l.record(NOW, NOW - 4_000_000); // 4 ms late: ordinary
        assert_eq!(l.messages(), 3);
        assert_eq!(l.ahead_of_clock(), 2);
        assert_eq!(l.max_lead_ms(), Some(5000.0));
        let j = l.to_json();
        assert_eq!(j["ahead_of_clock"], 2);
        assert_eq!(j["max_lead_ms"], 5000.0);
        // The two ahead were recorded as 1 µs: the median is 0.001 ms.
        assert_eq!(j["p50"], 0.001);
        assert_eq!(
            l.notices(),
            ["publisher clock ahead by up to 5000 ms: latency clamped for 2 message(s)"]
        );
    }

    #[test]
    fn latencies_beyond_an_hour_are_counted_and_extremes_do_not_overflow() {
        let mut l = Latency::new().unwrap();
        l.record(NOW, NOW - 7_200_000_000_000); // 2 h
        l.record(i64::MAX, i64::MIN); // ~584 years
        l.record(i64::MIN, i64::MAX); // ~584 years ahead
        assert_eq!(l.messages(), 3);
        assert_eq!(l.beyond_bound(), 2);
        assert_eq!(l.ahead_of_clock(), 1);
        // i64::MAX − i64::MIN = 2^64 − 1 ns.
        let lead = l.max_lead_ms().unwrap();
        assert!((lead - 18_446_744_073_709.55).abs() < 0.01, "{lead}");
        assert_eq!(l.notices().len(), 2);
        assert_eq!(l.notices()[1], "2 latency(ies) beyond 1 h: recorded as 1 h");
        assert_eq!(l.to_json()["beyond_1h"], 2);
    }
}

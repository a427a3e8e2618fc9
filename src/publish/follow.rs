//! The follower's ordering of one publisher scene's messages ([`Sequencer`]): keyframes and
//! deltas arrive on two topics (MQTT orders messages within a topic only), possibly repeated (a
//! retained keyframe, a QoS 1 redelivery) or with some missing (a broker restart, a follower
//! that fell behind). One sequence number per publisher and scene puts them in order.
//!
//! Rules: nothing is applied before the first keyframe (deltas that come first are held, a
//! bounded number); a keyframe is applied and makes the next sequence number the one after it;
//! a delta with the expected number is applied; one already applied is ignored; one past the
//! expected number is a gap: it is counted, and deltas are held (at most [`MAX_HELD`], the
//! oldest dropped) until the next keyframe, which the publisher sends every few seconds — a
//! follower skips to it instead of buffering without bound. A keyframe overlaps what the deltas
//! before it carried: the scene applying it keeps what it has (the time series applies each
//! series' samples newer than its newest).

use std::collections::BTreeMap;

use super::protocol::Envelope;

/// Most deltas held while waiting for a keyframe.
pub const MAX_HELD: usize = 512;

/// The follower's ordering state for one publisher scene.
#[derive(Debug, Default)]
pub struct Sequencer {
    /// The publisher followed (the first one heard, or the one of the newest keyframe).
    publisher: Option<u64>,
    /// The sequence number the next delta should have.
    next_seq: Option<u64>,
    /// Deltas held until a keyframe, by sequence number.
    held: BTreeMap<u64, Envelope>,
    /// Messages missing in the sequence (a gap of 3 counts 3).
    pub gaps: u64,
    /// Keyframes applied.
    pub keyframes_used: u64,
    /// Messages from another publisher on the same topic (ignored).
    pub other_publisher: u64,
    /// The other publisher's id, when one was heard.
    pub other_id: Option<u64>,
    /// Messages that came again (already applied).
    pub repeated: u64,
    /// Deltas dropped because too many were held.
    pub dropped_held: u64,
    /// The last applied message's publisher frame and stream time, s.
    pub at: Option<(u64, f64)>,
    /// The last message applied was a retained keyframe (the broker's copy, heard when the
    /// follower subscribed): the live messages after it skip those sent since, which is
    /// joining, not a loss.
    joined: bool,
}

impl Sequencer {
    /// Takes one message (`retained`: the broker's retained copy, delivered on subscribing);
    /// returns the messages to apply now, in order (none, or this one and held ones that follow
    /// on from it).
    pub fn accept(&mut self, e: Envelope, retained: bool) -> Vec<Envelope> {
        match self.publisher {
            None => self.publisher = Some(e.publisher),
            Some(p) if p != e.publisher => {
                self.other_publisher += 1;
                self.other_id = Some(e.publisher);
                return Vec::new();
            }
            Some(_) => {}
        }
        let mut out = Vec::new();
        if e.body.is_keyframe() {
            let waiting = self.next_seq.is_none();
            if waiting || e.seq >= self.next_seq.unwrap_or(0) {
                if let Some(n) = self.next_seq
                    && !self.joined
                {
                    // Messages between the last applied and this keyframe were lost (the
                    // keyframe makes up for them): a gap all the same.
                    self.gaps += e.seq - n;
                }
                self.joined = retained;
                self.keyframes_used += 1;
                self.next_seq = Some(e.seq + 1);
                self.apply(e, &mut out);
                self.replay(&mut out);
            } else {
                // An older keyframe (the retained one, heard late): its content is known.
                self.repeated += 1;
            }
        } else {
            match self.next_seq {
                None => self.hold(e),
                Some(n) if e.seq < n => self.repeated += 1,
                Some(n) if e.seq == n => {
                    self.joined = false;
                    self.next_seq = Some(n + 1);
                    self.apply(e, &mut out);
                    self.replay(&mut out);
                }
                Some(n) => {
                    // A gap: wait for the next keyframe (not counted right after joining
                    // from the retained keyframe).
                    if !std::mem::take(&mut self.joined) {
                        self.gaps += e.seq - n;
                    }
                    self.next_seq = None;
                    self.hold(e);
                }
            }
        }
        out
    }

    /// Whether the follower waits for a keyframe (at the start, or after a gap).
    pub fn waiting_for_keyframe(&self) -> bool {
        self.next_seq.is_none()
    }

    /// The publisher followed, once one was heard.
    pub fn publisher(&self) -> Option<u64> {
        self.publisher
    }

    /// Deltas held now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    fn hold(&mut self, e: Envelope) {
        self.held.insert(e.seq, e);
        while self.held.len() > MAX_HELD {
            self.held.pop_first();
            self.dropped_held += 1;
        }
    }

    /// Applies the held deltas that follow on from the expected number; drops those before it.
    fn replay(&mut self, out: &mut Vec<Envelope>) {
        while let Some(n) = self.next_seq {
            let Some((&first, _)) = self.held.first_key_value() else {
                return;
            };
            if first < n {
                self.held.pop_first();
            } else if first == n {
                if let Some((_, e)) = self.held.pop_first() {
                    self.next_seq = Some(n + 1);
                    self.apply(e, out);
                }
            } else {
                return;
            }
        }
    }

    fn apply(&mut self, e: Envelope, out: &mut Vec<Envelope>) {
        self.at = Some((e.frame, e.stream_s));
        out.push(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::protocol::{Body, SeriesDelta, SeriesKeyframe, SeriesSamples, SeriesView};

    /// Samples at times t0..t1 (one a second), value = time × 10.
    fn samples(t0: u32, t1: u32) -> SeriesSamples {
        SeriesSamples {
            id: 0,
            name: "a".into(),
            first_index: u64::from(t0),
            origin: 0.0,
            origin_ns: None,
            times: (t0..t1).map(f64::from).collect(),
            values: (t0..t1).map(|t| t as f32 * 10.0).collect(),
        }
    }

    fn msg(seq: u64, key: bool, t0: u32, t1: u32) -> Envelope {
        Envelope {
            publisher: 9,
            seq,
            frame: seq,
            stream_s: f64::from(t1),
            sent_unix_ns: 0,
            scene: "timeseries".into(),
            body: if key {
                Body::SeriesKey(SeriesKeyframe {
                    generation: 0,
                    view: SeriesView {
                        window_s: 10.0,
                        follow: true,
                        paused: (0.0, 10.0),
                        fixed_y: None,
                    },
                    series: vec![samples(t0, t1)],
                })
            } else {
                Body::SeriesDelta(SeriesDelta {
                    series: vec![samples(t0, t1)],
                    view: None,
                })
            },
        }
    }

    /// The times of the messages applied, in order, each series' samples newer than the
    /// newest applied (as the time-series scene applies them).
    fn times(f: &mut Sequencer, msgs: Vec<Envelope>) -> Vec<f64> {
        // The newest time applied so far, kept with the sequencer's state (its `at` frame is
        // the newest message's, and each message's last time is its frame's).
        let mut newest = f.at.map_or(f64::NEG_INFINITY, |(_, t)| t - 1.0);
        let mut out = Vec::new();
        for m in msgs.into_iter().flat_map(|m| f.accept(m, false)) {
            let series = match m.body {
                Body::SeriesKey(k) => k.series,
                Body::SeriesDelta(d) => d.series,
                _ => Vec::new(),
            };
            for t in series.into_iter().flat_map(|s| s.times) {
                if t > newest {
                    newest = t;
                    out.push(t);
                }
            }
        }
        out
    }

    fn range(t0: u32, t1: u32) -> Vec<f64> {
        (t0..t1).map(f64::from).collect()
    }

    #[test]
    fn in_order_with_deltas_before_the_first_keyframe() {
        let mut f = Sequencer::default();
        // Deltas 5 and 6 arrive before keyframe 4 (samples 0..10); 3 is older than it.
        let got = times(
            &mut f,
            vec![
                msg(5, false, 10, 12),
                msg(3, false, 6, 8),
                msg(6, false, 12, 13),
                msg(4, true, 0, 10),
                msg(7, false, 13, 15),
            ],
        );
        assert_eq!(got, range(0, 15));
        assert_eq!((f.keyframes_used, f.gaps, f.held()), (1, 0, 0));
        assert_eq!(f.at, Some((7, 15.0)));
    }

    #[test]
    fn repeats_are_applied_once_and_keyframes_overlap() {
        let mut f = Sequencer::default();
        let got = times(
            &mut f,
            vec![
                msg(1, true, 0, 5),
                msg(2, false, 5, 7),
                msg(2, false, 5, 7),
                // A keyframe overlapping what was applied: only the newer samples.
                msg(3, true, 2, 9),
                msg(1, true, 0, 5),
            ],
        );
        assert_eq!(got, range(0, 9));
        assert_eq!(f.repeated, 2);
        assert_eq!(f.keyframes_used, 2);
    }

    #[test]
    fn a_gap_waits_for_the_next_keyframe() {
        let mut f = Sequencer::default();
        let got = times(
            &mut f,
            vec![
                msg(1, true, 0, 2),
                msg(2, false, 2, 3),
                // 3 and 4 are lost: 5 is held, as is 6, until keyframe 7 (samples 0..8).
                msg(5, false, 5, 6),
                msg(6, false, 6, 7),
            ],
        );
        assert_eq!(got, range(0, 3));
        assert!(f.waiting_for_keyframe());
        assert_eq!(f.gaps, 2);
        let got = times(&mut f, vec![msg(7, true, 0, 8), msg(8, false, 8, 9)]);
        assert_eq!(got, range(3, 9));
        assert_eq!(
            f.held(),
            0,
            "the held deltas before the keyframe are dropped"
        );
    }

    #[test]
    fn a_keyframe_after_lost_messages_counts_them_as_a_gap() {
        let mut f = Sequencer::default();
        // 3..=5 are lost; keyframe 6 carries everything up to it.
        let got = times(
            &mut f,
            vec![msg(1, true, 0, 2), msg(2, false, 2, 3), msg(6, true, 0, 8)],
        );
        assert_eq!(got, range(0, 8));
        assert_eq!((f.gaps, f.keyframes_used), (3, 2));
        assert!(!f.waiting_for_keyframe());
    }

    #[test]
    fn joining_from_the_retained_keyframe_is_not_a_gap() {
        let mut f = Sequencer::default();
        // The retained keyframe 4, then live messages from 9 on: held until keyframe 11.
        assert_eq!(f.accept(msg(4, true, 0, 4), true).len(), 1);
        for seq in [9, 10] {
            assert!(f.accept(msg(seq, false, 9, 10), false).is_empty());
        }
        assert_eq!(f.accept(msg(11, true, 0, 11), false).len(), 1);
        assert_eq!(f.accept(msg(12, false, 11, 12), false).len(), 1);
        assert_eq!(f.gaps, 0);
        // A loss after that counts.
        assert!(f.accept(msg(14, false, 13, 14), false).is_empty());
        assert_eq!(f.gaps, 1);
    }

    #[test]
    fn memory_is_bounded_while_waiting_and_other_publishers_are_ignored() {
        let mut f = Sequencer::default();
        let n = MAX_HELD as u64 + 100;
        for seq in 0..n {
            assert!(f.accept(msg(seq + 10, false, 0, 1), false).is_empty());
        }
        assert_eq!(f.held(), MAX_HELD);
        assert_eq!(f.dropped_held, 100);
        let mut other = msg(1, true, 0, 3);
        other.publisher = 10;
        assert!(f.accept(other, false).is_empty());
        assert_eq!(f.other_publisher, 1);
        assert_eq!(f.other_id, Some(10));
    }
}

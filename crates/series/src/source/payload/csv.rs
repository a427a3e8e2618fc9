//! Format `Csv`: lines of fields (`1.5,2,3`, `temp=21.5,hum=40`) split by `csv_core` readers
//! kept across messages, each field named by its column or its `name=` and read into the sink.

use super::sink::{Sink, number, number_or_gap, snippet};
use super::{Decoder, PayloadError};

impl Decoder {
    /// Format `Csv`: every line (blank ones aside) split into fields; see [`Sink::csv_field`].
    pub(super) fn csv_payload(&mut self, payload: &[u8]) -> Result<(), PayloadError> {
        let sink = &mut self.sink;
        sink.depth = 1;
        for line in payload.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let n = self.csv.split(line);
            let mut start = 0;
            for (index, &end) in self.csv.ends[..n].iter().enumerate() {
                sink.csv_field(index, &self.csv.out[start..end])?;
                start = end;
            }
        }
        Ok(())
    }
}

impl Sink {
    /// One CSV field at `index` of its line: empty: skipped; `name=value`; a bare number (named
    /// by `index`); the time field by index (a date, say); `name:value`; else an error.
    pub(super) fn csv_field(&mut self, index: usize, field: &[u8]) -> Result<(), PayloadError> {
        let Ok(text) = std::str::from_utf8(field) else {
            return Err(PayloadError::NotNumber(snippet(field)));
        };
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        let base = self.path.len();
        let result = if let Some((name, value)) = text.split_once('=') {
            self.push_key(name.trim());
            self.csv_value(value)
        } else {
            self.push_display(index);
            if number(text).is_some() || self.at_time() {
                self.csv_value(text)
            } else if let Some((name, value)) = text.split_once(':') {
                self.path.truncate(base);
                self.push_key(name.trim());
                self.csv_value(value)
            } else {
                self.csv_value(text)
            }
        };
        self.path.truncate(base);
        result
    }

    /// The value of a CSV field named by the current path: empty: skipped; `nan`, `inf`,
    /// `null`: a gap.
    pub(super) fn csv_value(&mut self, value: &str) -> Result<(), PayloadError> {
        let value = value.trim();
        if value.is_empty() {
            Ok(())
        } else if self.at_time() {
            let t = self.time_of_text(value)?;
            self.set_time(t);
            Ok(())
        } else if let Some(v) = number_or_gap(value) {
            self.emit(v);
            Ok(())
        } else {
            Err(PayloadError::NotNumber(snippet(value.as_bytes())))
        }
    }
}

/// Splits CSV lines with `csv_core` readers kept across messages (one per delimiter).
pub(super) struct CsvSplit {
    /// Readers for `,`, `;` and tab, built when first needed.
    pub(super) readers: [Option<Box<csv_core::Reader>>; 3],
    /// Field bytes of the last line.
    pub(super) out: Vec<u8>,
    /// Field ends in `out` of the last line.
    pub(super) ends: Vec<usize>,
}

impl CsvSplit {
    /// Splits `line` (no line break) into fields separated by `,`, or `;` or a tab when it has no
    /// comma; returns how many (their ends in `self.ends`, their bytes in `self.out`).
    pub(super) fn split(&mut self, line: &[u8]) -> usize {
        let (slot, delimiter) = if line.contains(&b',') {
            (0, b',')
        } else if line.contains(&b';') {
            (1, b';')
        } else if line.contains(&b'\t') {
            (2, b'\t')
        } else {
            (0, b',')
        };
        let reader = self.readers[slot].get_or_insert_with(|| {
            Box::new(csv_core::ReaderBuilder::new().delimiter(delimiter).build())
        });
        reader.reset();
        if self.out.len() < line.len() {
            self.out.resize(line.len(), 0);
        }
        if self.ends.len() < 16 {
            self.ends.resize(16, 0);
        }
        let (mut input, mut n_out, mut n_ends) = (line, 0, 0);
        loop {
            let (result, n_in, o, e) =
                reader.read_record(input, &mut self.out[n_out..], &mut self.ends[n_ends..]);
            input = &input[n_in..];
            n_out += o;
            n_ends += e;
            match result {
                // All input taken: the next call, with none, ends the record.
                csv_core::ReadRecordResult::InputEmpty => {}
                csv_core::ReadRecordResult::OutputFull => {
                    let n = self.out.len() * 2 + 64;
                    self.out.resize(n, 0);
                }
                csv_core::ReadRecordResult::OutputEndsFull => {
                    let n = self.ends.len() * 2;
                    self.ends.resize(n, 0);
                }
                csv_core::ReadRecordResult::Record | csv_core::ReadRecordResult::End => {
                    return n_ends;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::PayloadFormat;
    use super::super::tests::{decode_ok, decoder, named, owned};

    #[test]
    fn csv_bare_numbers_are_named_by_column() {
        let mut d = decoder(PayloadFormat::Csv, None);
        decode_ok(&mut d, "t", b"1.5,2,3");
        assert_eq!(
            owned(&d),
            named(&[("t/0", 1.5), ("t/1", 2.0), ("t/2", 3.0)])
        );
        decode_ok(&mut d, "", b"4;5\t\n6\t7\n");
        // `4;5\t` splits at `;`, `6\t7` at the tab; an empty field keeps its column.
        assert_eq!(
            owned(&d),
            named(&[("0", 4.0), ("1", 5.0), ("0", 6.0), ("1", 7.0)])
        );
        decode_ok(&mut d, "t", b"1,,3");
        assert_eq!(owned(&d), named(&[("t/0", 1.0), ("t/2", 3.0)]));
    }

    #[test]
    fn csv_name_value_pairs_and_several_lines() {
        let mut d = decoder(PayloadFormat::Csv, None);
        decode_ok(&mut d, "t", b"temp=21.5,hum=40");
        assert_eq!(owned(&d), named(&[("t/temp", 21.5), ("t/hum", 40.0)]));
        decode_ok(&mut d, "", b"a: 1; b :2\r\n\r\na=3\n");
        assert_eq!(owned(&d), named(&[("a", 1.0), ("b", 2.0), ("a", 3.0)]));
        let e = d.decode("t", b"temp=warm,hum=40").unwrap_err();
        assert_eq!(e.to_string(), "not a number: 'warm'");
    }

    #[test]
    fn csv_time_field_by_name_or_column() {
        let mut d = decoder(PayloadFormat::Csv, Some("ts"));
        assert_eq!(
            decode_ok(&mut d, "t", b"ts=1700000000,temp=1"),
            Some(1_700_000_000_000_000_000)
        );
        assert_eq!(owned(&d), named(&[("t/temp", 1.0)]));
        let mut d = decoder(PayloadFormat::Csv, Some("0"));
        assert_eq!(
            decode_ok(&mut d, "t", b"2023-11-14T22:13:20Z,5"),
            Some(1_700_000_000_000_000_000)
        );
        assert_eq!(owned(&d), named(&[("t/1", 5.0)]));
    }
}

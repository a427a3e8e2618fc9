//! `--export-series PATH.csv`: the chart's stored samples, written when the run ends.

use super::TimeSeries;
use crate::SceneError;

impl TimeSeries {
    /// Writes every stored sample as CSV, long format: a header `series,time_s,value`, then
    /// one row per sample, series by series in store order and each in storage order. Times
    /// are absolute seconds (`origin + relative time`), written in the shortest form that
    /// reads back to the same f64; NaN values (gaps) are written `NaN`. Returns the rows
    /// written.
    ///
    /// # Errors
    ///
    /// The file cannot be created or written: one line naming it.
    pub fn export_csv(&self, path: &std::path::Path) -> Result<usize, SceneError> {
        let err = |e: String| SceneError::Other(format!("--export-series {}: {e}", path.display()));
        let mut w = csv::Writer::from_path(path).map_err(|e| err(e.to_string()))?;
        w.write_record(["series", "time_s", "value"])
            .map_err(|e| err(e.to_string()))?;
        let mut rows = 0;
        for s in self.store.series() {
            let origin = s.origin().unwrap_or(0.0);
            for (times, values) in s.samples_from(0) {
                for (&t, &v) in times.iter().zip(values) {
                    w.write_record([s.name.as_str(), &(origin + t).to_string(), &v.to_string()])
                        .map_err(|e| err(e.to_string()))?;
                    rows += 1;
                }
            }
        }
        w.flush().map_err(|e| err(e.to_string()))?;
        Ok(rows)
    }
}

//! Batches into the store: [`SeriesSource::drain_into`], the map from a source's series to the
//! store's, and the counters batches add to the source.

use super::*;

impl SeriesSource {
    /// Moves every available batch into `store` (series found or created by name). Never blocks.
    pub fn drain_into(&mut self, store: &mut Store) {
        self.update_rates();
        sync_map(&self.names, &mut self.map, store);
        let mut counts = Counts {
            clamped: &mut self.values_clamped,
            note: &mut self.clamp_note,
            sorted: &mut self.rows_sorted,
            refused: &mut self.series_refused,
        };
        while let Some(mut batch) = self.pending.pop_front() {
            if !batch.new_names.is_empty() {
                self.names.append(&mut batch.new_names);
                sync_map(&self.names, &mut self.map, store);
            }
            apply(&self.map, &batch, store);
            note_batch(&mut counts, &batch);
        }
        if let Inner::Thread { rx, recycle, .. } = &mut self.inner {
            while let Ok(msg) = rx.pop() {
                match msg {
                    Msg::Batch(mut batch) => {
                        if !batch.new_names.is_empty() {
                            self.names.append(&mut batch.new_names);
                            sync_map(&self.names, &mut self.map, store);
                        }
                        apply(&self.map, &batch, store);
                        note_batch(&mut counts, &batch);
                        let room = MESSAGE_TIMES_KEPT.saturating_sub(self.message_times.len());
                        let kept = batch.msg_times.len().min(room);
                        self.message_times
                            .extend_from_slice(&batch.msg_times[..kept]);
                        batch.clear();
                        // A full recycle ring just frees the batch.
                        let _ = recycle.push(batch);
                    }
                    Msg::Error(e) => {
                        self.error = Some(e);
                        self.finished = true;
                    }
                    Msg::Done => self.finished = true,
                    Msg::Skipped { first, rows } => {
                        self.rows_skipped += rows;
                        self.warning.get_or_insert(first);
                    }
                    Msg::KeyValues(counts) => {
                        for (k, n) in self.key_candidates.iter_mut().zip(counts) {
                            k.values = n;
                        }
                        self.key_candidates.retain(|k| k.values <= KEY_MAX_VALUES);
                    }
                }
            }
        }
    }
}

/// Makes `map[i]` the store index of the series `names[i]`: entries that still point at a
/// series of their name are kept, names beyond the map (series a batch started) are found or
/// created, and a map the store no longer matches (e.g. a cleared store) is rebuilt.
fn sync_map(names: &[String], map: &mut Vec<usize>, store: &mut Store) {
    let valid = map.len() <= names.len()
        && map
            .iter()
            .zip(names)
            .all(|(&i, name)| store.series().get(i).is_some_and(|s| &s.name == name));
    if !valid {
        map.clear();
    }
    for name in &names[map.len()..] {
        map.push(store.ensure(name));
    }
}

/// Adds what `batch` counted (clamped values, with the first note; rows sorted) to the source.
fn note_batch(source: &mut Counts<'_>, batch: &Batch) {
    *source.clamped += batch.clamped;
    *source.sorted += batch.rows_sorted;
    *source.refused += batch.refused;
    if source.note.is_none() {
        source.note.clone_from(&batch.clamp_note);
    }
}

/// The counters of a [`SeriesSource`] that batches add to.
struct Counts<'a> {
    clamped: &'a mut u64,
    note: &'a mut Option<String>,
    sorted: &'a mut u64,
    refused: &'a mut u64,
}

fn apply(map: &[usize], batch: &Batch, store: &mut Store) {
    for &(s, t_ns, v) in &batch.points {
        if let Some(&index) = map.get(s as usize) {
            store.series_mut()[index].push_ns(t_ns, v);
        }
    }
    for (column, &index) in batch.columns.iter().zip(map) {
        // Producers fill every column to the row count, so the lengths always pair up.
        let series = &mut store.series_mut()[index];
        let _ = if batch.times_ns.is_empty() {
            series.push_slice(&batch.times, column)
        } else {
            series.push_slice_ns(&batch.times_ns, column)
        };
    }
}

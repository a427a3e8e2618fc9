//! Reading a view's saved settings (its object in the app's settings file) field by field: a
//! field that is missing or of the wrong type keeps the default and is named in one warning,
//! the others still apply.

use serde::Serialize;

/// Reads a scene's saved settings object field by field: a field missing is skipped silently, a
/// field of the wrong type or out of range is skipped with a note naming it, so one bad field
/// does not lose the others.
pub struct Fields<'a> {
    obj: Option<&'a serde_json::Map<String, serde_json::Value>>,
    scene: &'static str,
    /// Notes on fields skipped (e.g. `spectrogram.fft_size: 1000 is not one of …`).
    pub notes: Vec<String>,
}

impl<'a> Fields<'a> {
    /// The fields of `value` (an object; anything else has no fields) saved by scene `scene`.
    pub fn new(scene: &'static str, value: &'a serde_json::Value) -> Fields<'a> {
        Fields {
            obj: value.as_object(),
            scene,
            notes: Vec::new(),
        }
    }

    /// Field `key` as a `T`, if present and of that type.
    pub fn get<T: serde::de::DeserializeOwned>(&mut self, key: &str) -> Option<T> {
        let v = self.obj?.get(key)?;
        match serde_json::from_value(v.clone()) {
            Ok(t) => Some(t),
            Err(e) => {
                self.notes.push(format!("{}.{key}: {e}", self.scene));
                None
            }
        }
    }

    /// Field `key` as one of the values of flag-like enum `T`, by its name (case-insensitive).
    pub fn value_enum<T: clap::ValueEnum>(&mut self, key: &str) -> Option<T> {
        let name = self.get::<String>(key)?;
        match T::from_str(&name, true) {
            Ok(t) => Some(t),
            Err(_) => {
                let names: Vec<String> = T::value_variants()
                    .iter()
                    .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
                    .collect();
                self.notes.push(format!(
                    "{}.{key}: {name:?} is not one of {}",
                    self.scene,
                    names.join(", ")
                ));
                None
            }
        }
    }

    /// Field `key`, an object, laid over `current` field by field (fields `current` does not
    /// have, or of another JSON type, are skipped with a note) and read back as a `T`.
    pub fn merge<T: Serialize + serde::de::DeserializeOwned>(
        &mut self,
        key: &str,
        current: &T,
    ) -> Option<T> {
        let saved = self.obj?.get(key)?.as_object()?;
        let mut now = serde_json::to_value(current).ok()?;
        let fields = now.as_object_mut()?;
        for (k, v) in saved {
            match fields.get_mut(k) {
                Some(f) if same_kind(f, v) => *f = v.clone(),
                _ => self.notes.push(format!(
                    "{}.{key}.{k}: {v} is not a known setting",
                    self.scene
                )),
            }
        }
        match serde_json::from_value(now) {
            Ok(t) => Some(t),
            Err(e) => {
                self.notes.push(format!("{}.{key}: {e}", self.scene));
                None
            }
        }
    }

    /// Field `key` as a `T` for which `valid` holds; else a note saying `expected`.
    pub fn get_if<T: serde::de::DeserializeOwned + std::fmt::Debug>(
        &mut self,
        key: &str,
        expected: &str,
        valid: impl Fn(&T) -> bool,
    ) -> Option<T> {
        let t = self.get::<T>(key)?;
        if valid(&t) {
            Some(t)
        } else {
            self.notes
                .push(format!("{}.{key}: {t:?} is not {expected}", self.scene));
            None
        }
    }
}

/// Whether two JSON values are of the same kind (numbers of any kind count as one).
fn same_kind(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// The name flag-like enum value `v` has on the command line (`--particle-mode grid`).
pub fn enum_name<T: clap::ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

//! Input devices: the list offered to the user (on ALSA only real capture routes, not plugins
//! or output-only PCMs), their names and ids, and the lookup of a device by the name or id the
//! user gave.

use cpal::SampleFormat;
use cpal::traits::{DeviceTrait, HostTrait};

use crate::AudioError;

/// One input device of the default host, for a device picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputDeviceInfo {
    /// User-facing name (cpal's description name), e.g. `Monitor of Null Output`.
    pub name: String,
    /// The host's id of the device, e.g. PulseAudio's source name `viz.monitor`; empty when the
    /// host gives none. [`crate::AudioSelection::Device`] accepts either.
    pub id: String,
    /// Default input sample rate, Hz (0 when the device reports no default config).
    pub sample_rate: u32,
    /// Default input channel count (0 when unknown).
    pub channels: u16,
    /// Default input sample format, e.g. `I16`, `F32`; `None` when unknown.
    pub sample_format: Option<SampleFormat>,
}

/// The input devices of cpal's default host that are offered to the user ([`offered_inputs`]:
/// on ALSA, real capture routes only), with their default configs, in enumeration order (empty
/// when the host cannot enumerate). Talks to the sound server: call it when the picker opens, not
/// every frame.
pub fn input_devices() -> Vec<InputDeviceInfo> {
    let Ok(host) = default_host() else {
        return Vec::new();
    };
    let Ok(devices) = host.input_devices() else {
        return Vec::new();
    };
    let devices: Vec<cpal::Device> = devices.collect();
    let pairs: Vec<(String, String)> = devices
        .iter()
        .map(|d| (device_name(d), device_id(d)))
        .collect();
    offered_inputs(is_alsa(&host), &pairs)
        .into_iter()
        .map(|i| {
            let cfg = devices[i].default_input_config().ok();
            let (name, id) = pairs[i].clone();
            InputDeviceInfo {
                name,
                id,
                sample_rate: cfg.as_ref().map_or(0, |c| c.sample_rate()),
                channels: cfg.as_ref().map_or(0, |c| c.channels()),
                sample_format: cfg.as_ref().map(|c| c.sample_format()),
            }
        })
        .collect()
}

/// cpal's default host — PipeWire, then PulseAudio when their server runs, then ALSA, in cpal's
/// order — without cpal's panic when none can be opened (an ALSA configuration that does not
/// load: a broken `~/.asoundrc` or `ALSA_CONFIG_PATH`).
///
/// # Errors
///
/// The last host's reason, e.g. `ALSA: …`.
pub fn default_host() -> Result<cpal::Host, String> {
    let mut reason = "no audio host in this build".to_string();
    for id in cpal::available_hosts() {
        match cpal::host_from_id(id) {
            Ok(host) => return Ok(host),
            Err(e) => reason = format!("{}: {e}", id.name()),
        }
    }
    Err(reason)
}

/// Whether `host` is cpal's ALSA host (whose device list holds ALSA's plugin definitions too).
fn is_alsa(host: &cpal::Host) -> bool {
    host.id().name() == "ALSA"
}

/// ALSA plugins bound to a card that only play (dmix, surround and digital outputs): no capture.
const ALSA_OUTPUT_ONLY: &[&str] = &[
    "dmix",
    "surround21",
    "surround40",
    "surround41",
    "surround50",
    "surround51",
    "surround71",
    "iec958",
    "spdif",
    "hdmi",
    "usbstream",
];

/// ALSA PCMs without a card that lead to real capture: the configured default and the sound
/// servers' plugins.
const ALSA_SERVER_ROUTES: &[&str] = &["default", "sysdefault", "pulse", "pipewire"];

/// Whether the ALSA PCM `id` (as `arecord -L` lists it, and cpal's device id on its ALSA host)
/// is a capture route worth offering: `default`, `sysdefault`, `pulse`, `pipewire`, or a PCM
/// bound to a card (`CARD=` among its arguments: `hw:CARD=PCH,DEV=0`, `plughw:…`, `dsnoop:…`,
/// `front:…`, `sysdefault:CARD=…`) that is not output-only ([`ALSA_OUTPUT_ONLY`]). ALSA's plugin
/// definitions without a card (`null`, `lavrate`, `samplerate`, `speexrate`, `speex`, `upmix`,
/// `vdownmix`, `oss`, `jack`) are not devices: they are not offered, though `--audio` still opens
/// one named by its exact id.
pub fn alsa_offered(id: &str) -> bool {
    let (plugin, args) = id.split_once(':').unwrap_or((id, ""));
    if args.is_empty() {
        return ALSA_SERVER_ROUTES.contains(&plugin);
    }
    let on_card = args.split(',').any(|a| a.trim().starts_with("CARD="));
    on_card && !ALSA_OUTPUT_ONLY.contains(&plugin)
}

/// The parts of an ALSA id that name the same device: plugin, `CARD=` value, `DEV=` value.
fn alsa_parts(id: &str) -> (&str, &str, &str) {
    let (plugin, args) = id.split_once(':').unwrap_or((id, ""));
    let arg = |key: &str| {
        args.split(',')
            .find_map(|a| a.trim().strip_prefix(key))
            .unwrap_or("")
    };
    (plugin, arg("CARD="), arg("DEV="))
}

/// Indices of the input devices to offer among `devices` ((name, id) pairs in enumeration
/// order). On a sound-server host (PulseAudio, PipeWire, JACK) every one. On ALSA
/// (`alsa == true`), those [`alsa_offered`] accepts, without the numbered copies cpal adds of
/// card devices (`hw:CARD=0,DEV=0` next to `hw:CARD=PCH,DEV=0` of the same name and device).
pub fn offered_inputs(alsa: bool, devices: &[(String, String)]) -> Vec<usize> {
    if !alsa {
        return (0..devices.len()).collect();
    }
    let numbered = |card: &str| !card.is_empty() && card.bytes().all(|b| b.is_ascii_digit());
    devices
        .iter()
        .enumerate()
        .filter(|(_, (_, id))| alsa_offered(id))
        .filter(|(_, (name, id))| {
            let (plugin, card, dev) = alsa_parts(id);
            // A numbered card device is a copy when a named one of the same plugin, device and
            // name is listed.
            !numbered(card)
                || !devices.iter().any(|(other_name, other)| {
                    let (p, c, d) = alsa_parts(other);
                    p == plugin
                        && d == dev
                        && !numbered(c)
                        && other_name == name
                        && alsa_offered(other)
                })
        })
        .map(|(i, _)| i)
        .collect()
}

/// How a device is listed in messages: `name (id)`, or the name alone when the host gives no id
/// or the id is the name.
pub fn listed_name(name: &str, id: &str) -> String {
    if id.is_empty() || id == name {
        name.to_string()
    } else {
        format!("{name} ({id})")
    }
}

/// The host's id string of a device (`viz.monitor`), or empty.
pub fn device_id(device: &cpal::Device) -> String {
    device
        .id()
        .map(|id| id.id().to_string())
        .unwrap_or_default()
}

/// The user-facing name of a device: its description's name, else its `Display` form.
pub fn device_name(device: &cpal::Device) -> String {
    match device.description() {
        Ok(d) => d.name().to_string(),
        Err(_) => device.to_string(),
    }
}

/// The names of the input devices of `host` offered to the user ([`offered_inputs`]), in
/// enumeration order; empty when enumeration fails.
pub fn input_device_names_of(host: &cpal::Host) -> Vec<String> {
    let Ok(devices) = host.input_devices() else {
        return Vec::new();
    };
    let pairs: Vec<(String, String)> = devices.map(|d| (device_name(&d), device_id(&d))).collect();
    offered_inputs(is_alsa(host), &pairs)
        .into_iter()
        .map(|i| pairs[i].0.clone())
        .collect()
}

/// Picks the index of the device matching `wanted` among `(name, id)` pairs: an exact match on the
/// name or the host id first, else the one name or id containing `wanted` case-insensitively.
///
/// # Errors
///
/// `Err(None)`: no match; `Err(Some(indices))`: several substring matches.
pub fn match_device_name(
    wanted: &str,
    candidates: &[(String, String)],
) -> Result<usize, Option<Vec<usize>>> {
    if let Some(i) = candidates
        .iter()
        .position(|(name, id)| name == wanted || id == wanted)
    {
        return Ok(i);
    }
    let needle = wanted.to_lowercase();
    let hits: Vec<usize> = candidates
        .iter()
        .enumerate()
        .filter(|(_, (name, id))| {
            name.to_lowercase().contains(&needle) || id.to_lowercase().contains(&needle)
        })
        .map(|(i, _)| i)
        .collect();
    match hits.len() {
        0 => Err(None),
        1 => Ok(hits[0]),
        _ => Err(Some(hits)),
    }
}

/// Finds the input device of the default host named `wanted` (see [`match_device_name`]) among
/// those offered ([`offered_inputs`]); one not offered (an ALSA plugin such as `jack`) is still
/// found by its exact id.
///
/// # Errors
///
/// [`AudioError::DeviceList`] when the host cannot enumerate, [`AudioError::DeviceNotFound`]
/// (listing the offered input devices as `name (id)`), [`AudioError::DeviceAmbiguous`].
pub fn find_input_device(wanted: &str) -> Result<cpal::Device, AudioError> {
    let host = default_host().map_err(|reason| AudioError::DeviceList {
        name: wanted.to_string(),
        reason,
    })?;
    let mut devices: Vec<cpal::Device> = host
        .input_devices()
        .map_err(|e| AudioError::DeviceList {
            name: wanted.to_string(),
            reason: e.to_string(),
        })?
        .collect();
    let all: Vec<(String, String)> = devices
        .iter()
        .map(|d| (device_name(d), device_id(d)))
        .collect();
    let offered = offered_inputs(is_alsa(&host), &all);
    let candidates: Vec<(String, String)> = offered.iter().map(|&i| all[i].clone()).collect();
    let join = |idx: &mut dyn Iterator<Item = usize>| {
        idx.map(|i| listed_name(&candidates[i].0, &candidates[i].1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match match_device_name(wanted, &candidates) {
        Ok(i) => Ok(devices.swap_remove(offered[i])),
        Err(None) => {
            if let Some(i) = all.iter().position(|(_, id)| id == wanted) {
                return Ok(devices.swap_remove(i));
            }
            Err(AudioError::DeviceNotFound {
                name: wanted.to_string(),
                available: if candidates.is_empty() {
                    "none".to_string()
                } else {
                    join(&mut (0..candidates.len()))
                },
            })
        }
        Err(Some(hits)) => Err(AudioError::DeviceAmbiguous {
            name: wanted.to_string(),
            matches: join(&mut hits.into_iter()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `arecord -L` on Debian 12 with libasound2-plugins, PipeWire's ALSA plugin, an Intel HDA
    /// card (`PCH`) and a USB microphone (`Microphone`): the capture PCMs ALSA's hints give,
    /// each an id line and its description lines.
    const ARECORD_L: &str = "\
null
    Discard all samples (playback) or generate zero samples (capture)
lavrate
    Rate Converter Plugin Using Libav/FFmpeg Library
samplerate
    Rate Converter Plugin Using Samplerate Library
speexrate
    Rate Converter Plugin Using Speex Resampler
jack
    JACK Audio Connection Kit
oss
    Open Sound System
pipewire
    PipeWire Sound Server
pulse
    PulseAudio Sound Server
speex
    Plugin using Speex DSP (resample, agc, denoise, echo, dereverb)
upmix
    Plugin for channel upmix (4,6,8)
vdownmix
    Plugin for channel downmix (stereo) with a simple spacialization
default
    Default ALSA Output (currently PipeWire Media Server)
sysdefault:CARD=PCH
    HDA Intel PCH, ALC257 Analog
    Default Audio Device
front:CARD=PCH,DEV=0
    HDA Intel PCH, ALC257 Analog
    Front output / input
dsnoop:CARD=PCH,DEV=0
    HDA Intel PCH, ALC257 Analog
    Direct sample snooping device
hw:CARD=PCH,DEV=0
    HDA Intel PCH, ALC257 Analog
    Direct hardware device without any conversions
plughw:CARD=PCH,DEV=0
    HDA Intel PCH, ALC257 Analog
    Hardware device with all software conversions
usbstream:CARD=PCH
    HDA Intel PCH
    USB Stream Output
sysdefault:CARD=Microphone
    USB Microphone, USB Audio
    Default Audio Device
front:CARD=Microphone,DEV=0
    USB Microphone, USB Audio
    Front output / input
dsnoop:CARD=Microphone,DEV=0
    USB Microphone, USB Audio
    Direct sample snooping device
hw:CARD=Microphone,DEV=0
    USB Microphone, USB Audio
    Direct hardware device without any conversions
plughw:CARD=Microphone,DEV=0
    USB Microphone, USB Audio
    Hardware device with all software conversions
usbstream:CARD=Microphone
    USB Microphone
    USB Stream Output
";

    /// (name, id) as cpal's ALSA host lists them: the hints of `arecord -L` (name = first
    /// description line), then its numbered copies of each card's hw/plughw devices.
    fn alsa_devices(listing: &str, numbered: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut id: Option<&str> = None;
        for line in listing.lines() {
            if !line.starts_with(' ') {
                id = Some(line.trim());
            } else if let Some(i) = id.take() {
                out.push((line.trim().to_string(), i.to_string()));
            }
        }
        for (card, name) in numbered {
            for plugin in ["hw", "plughw"] {
                out.push((name.to_string(), format!("{plugin}:CARD={card},DEV=0")));
            }
        }
        out
    }

    #[test]
    fn alsa_plugins_are_not_offered_as_input_devices() {
        let devices = alsa_devices(
            ARECORD_L,
            &[
                ("0", "HDA Intel PCH, ALC257 Analog"),
                ("1", "USB Microphone, USB Audio"),
            ],
        );
        assert_eq!(devices.len(), 28, "24 hints and 4 numbered copies");
        let offered: Vec<&str> = offered_inputs(true, &devices)
            .into_iter()
            .map(|i| devices[i].1.as_str())
            .collect();
        // Worked out by hand from the listing: the sound servers and the default, then each
        // card's capture PCMs; no plugin definition, no USB stream output, no numbered copy.
        assert_eq!(
            offered,
            [
                "pipewire",
                "pulse",
                "default",
                "sysdefault:CARD=PCH",
                "front:CARD=PCH,DEV=0",
                "dsnoop:CARD=PCH,DEV=0",
                "hw:CARD=PCH,DEV=0",
                "plughw:CARD=PCH,DEV=0",
                "sysdefault:CARD=Microphone",
                "front:CARD=Microphone,DEV=0",
                "dsnoop:CARD=Microphone,DEV=0",
                "hw:CARD=Microphone,DEV=0",
                "plughw:CARD=Microphone,DEV=0",
            ]
        );
        for (name, _) in &devices {
            let plugin_name = name.contains("Plugin") || name.contains("Discard all samples");
            assert!(
                !plugin_name
                    || offered_inputs(true, &devices)
                        .iter()
                        .all(|&i| &devices[i].0 != name),
                "{name} is offered"
            );
        }
    }

    #[test]
    fn numbered_alsa_cards_stay_when_no_named_copy_is_listed() {
        // A card the hints do not list (no conf for its driver): cpal's numbered devices are all
        // there is, and they stay.
        let devices = alsa_devices("null\n    Discard all samples\n", &[("2", "Loopback PCM")]);
        let offered: Vec<&str> = offered_inputs(true, &devices)
            .into_iter()
            .map(|i| devices[i].1.as_str())
            .collect();
        assert_eq!(offered, ["hw:CARD=2,DEV=0", "plughw:CARD=2,DEV=0"]);
        // Two identical microphones on two cards are two devices.
        let twins = vec![
            ("USB Mic".to_string(), "hw:CARD=Device,DEV=0".to_string()),
            ("USB Mic".to_string(), "hw:CARD=Device_1,DEV=0".to_string()),
        ];
        assert_eq!(offered_inputs(true, &twins), [0, 1]);
    }

    #[test]
    fn sound_server_hosts_offer_every_device() {
        let list = vec![
            (
                "Monitor of Null Output".to_string(),
                "viz.monitor".to_string(),
            ),
            ("null".to_string(), "null".to_string()),
        ];
        assert_eq!(offered_inputs(false, &list), [0, 1]);
        assert_eq!(
            listed_name("Monitor of Null Output", "viz.monitor"),
            "Monitor of Null Output (viz.monitor)"
        );
        assert_eq!(listed_name("pulse", "pulse"), "pulse");
        assert_eq!(listed_name("Mic", ""), "Mic");
    }

    #[test]
    fn device_matching_rules() {
        let c = |n: &str, id: &str| (n.to_string(), id.to_string());
        let list = vec![
            c("Monitor of Null Output", "viz.monitor"),
            c("Built-in Audio Analog Stereo", "alsa_input.pci"),
            c("Monitor of Built-in Audio", "alsa_output.pci.monitor"),
        ];
        assert_eq!(match_device_name("Monitor of Null Output", &list), Ok(0));
        assert_eq!(match_device_name("viz.monitor", &list), Ok(0));
        assert_eq!(match_device_name("analog", &list), Ok(1));
        assert_eq!(match_device_name("null", &list), Ok(0));
        assert_eq!(match_device_name("monitor", &list), Err(Some(vec![0, 2])));
        assert_eq!(match_device_name("nothing", &list), Err(None));
        // An exact match wins over substring ambiguity.
        let list2 = vec![c("Mic", ""), c("Mic 2", "")];
        assert_eq!(match_device_name("Mic", &list2), Ok(0));
    }
}

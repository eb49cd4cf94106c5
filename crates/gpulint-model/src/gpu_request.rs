//! `docker run --gpus VALUE` read as the Docker CLI reads it (docker/cli
//! `opts/gpus.go`, `GpuOpts.Set`): the value is one line of CSV (Go's
//! `encoding/csv`: a field in double quotes may hold commas), each field is
//! `key=value` (`driver`, `count`, `device`, `capabilities`, `options`, each
//! at most once) or a bare count (`all`, `2`). `device=0,1` without the CSV
//! quotes is two fields, `device=0` and a count of `1`: the CLI accepts it,
//! and the daemon refuses the request when the container starts ("cannot
//! set both Count and DeviceIDs on device request", moby
//! `daemon/devices_nvidia_linux.go`), which is why Docker's documentation
//! writes `--gpus '"device=0,1"'`.
//!
//! `tests/it/engine.rs` gives every spelling it knows to `docker create --gpus`
//! and compares the `HostConfig.DeviceRequests` the daemon records with
//! what this module reads.

use super::container::Gpus;

/// One `--gpus` option, as the CLI turns it into a device request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRequest {
    pub driver: String,
    /// `-1` (or any negative count) is all; `0` with device ids is unset.
    pub count: i64,
    /// Written as a key (`count=2`, or a bare `2`), not the CLI's default.
    pub count_written: bool,
    pub device_ids: Option<Vec<String>>,
    /// The capability set; the CLI adds `gpu` to the ones written.
    pub capabilities: Vec<String>,
}

/// Capabilities of the NVIDIA device driver (moby `allNvidiaCaps`): a
/// request with no driver named goes to it when its set is within these.
const NVIDIA_CAPABILITIES: &[&str] = &[
    "gpu", "nvidia", "compute", "compat32", "graphics", "utility", "video", "display",
];

impl DeviceRequest {
    /// What the daemon refuses when the container starts.
    pub fn start_refusal(&self) -> Option<String> {
        let ids = self.device_ids.as_ref()?;
        (self.count != 0 && !ids.is_empty()).then(|| {
            format!(
                "the daemon refuses a GPU request with both a count ({}) and device ids ({}): \"cannot set both Count and DeviceIDs on device request\"",
                self.count,
                ids.join(", ")
            )
        })
    }

    /// Whether the NVIDIA driver serves it (moby `daemon/devices.go`: the
    /// driver named, or one whose capabilities hold the whole set).
    pub(crate) fn is_nvidia(&self) -> bool {
        match self.driver.as_str() {
            "" => self
                .capabilities
                .iter()
                .all(|c| NVIDIA_CAPABILITIES.contains(&c.as_str())),
            driver => driver == "nvidia",
        }
    }

    /// The GPUs it gives: all for a negative count, else its distinct
    /// device ids, else its count.
    pub fn gpus(&self) -> Gpus {
        if let Some(ids) = &self.device_ids
            && self.count == 0
        {
            let mut distinct: Vec<&str> = ids
                .iter()
                .map(|s| s.trim())
                .filter(|s| !s.is_empty())
                .collect();
            distinct.sort_unstable();
            distinct.dedup();
            return Gpus::Count(distinct.len() as u64);
        }
        match u64::try_from(self.count) {
            Ok(n) => Gpus::Count(n),
            Err(_) => Gpus::All,
        }
    }
}

/// Reads a `--gpus` value (quotes already removed by the shell); `Err`
/// holds why the Docker CLI refuses it, in its words.
pub fn parse_gpus(value: &str) -> Result<DeviceRequest, String> {
    let fields = read_csv_record(value)?;
    let mut request = DeviceRequest {
        driver: String::new(),
        count: 0,
        count_written: false,
        device_ids: None,
        capabilities: Vec::new(),
    };
    let mut seen: Vec<String> = Vec::new();
    // Each key once, as the CLI's `seen` set checks.
    let mark = |key: &str, seen: &mut Vec<String>| -> Result<(), String> {
        if seen.iter().any(|k| k == key) {
            return Err(format!(
                "gpu request key '{key}' can be specified only once"
            ));
        }
        seen.push(key.to_string());
        Ok(())
    };
    for field in &fields {
        let Some((key, value)) = field.split_once('=') else {
            mark(field, &mut seen)?;
            seen.push("count".into());
            request.count = parse_count(field)?;
            request.count_written = true;
            continue;
        };
        mark(key, &mut seen)?;
        match key {
            "driver" => request.driver = value.to_string(),
            "count" => {
                request.count = parse_count(value)?;
                request.count_written = true;
            }
            "device" => request.device_ids = Some(value.split(',').map(str::to_string).collect()),
            "capabilities" => {
                request.capabilities = value.split(',').map(str::to_string).collect();
                request.capabilities.push("gpu".into());
            }
            "options" => {
                read_csv_record(value).map_err(|e| format!("failed to read gpu options: {e}"))?;
            }
            _ => return Err(format!("unexpected key '{key}' in '{field}'")),
        }
    }
    if !seen.iter().any(|k| k == "count") && request.device_ids.is_none() {
        request.count = 1;
    }
    if request.capabilities.is_empty() {
        request.capabilities = vec!["gpu".into()];
    }
    Ok(request)
}

/// `all` or a decimal integer as Go's `strconv.Atoi` reads it (a sign,
/// digits, nothing else, within 64 bits).
fn parse_count(text: &str) -> Result<i64, String> {
    if text == "all" {
        return Ok(-1);
    }
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let invalid = |why: &str| {
        Err(format!(
            "invalid count ({text}): value must be either \"all\" or an integer: {why}"
        ))
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return invalid("invalid syntax");
    }
    match text.strip_prefix('+').unwrap_or(text).parse::<i64>() {
        Ok(n) => Ok(n),
        Err(_) => invalid("value out of range"),
    }
}

/// The first record of `text` as Go's `encoding/csv` reader reads it with
/// its defaults: fields split at commas; a field that starts with `"` is
/// quoted, `""` in it is one `"`, and it may hold commas and newlines; a
/// `"` anywhere else is an error; blank lines before the record are
/// skipped; `\r\n` is a newline.
fn read_csv_record(text: &str) -> Result<Vec<String>, String> {
    let text = text.replace("\r\n", "\n");
    let mut rest = text.as_str();
    // Blank lines before the record are skipped; none left is the end.
    loop {
        match rest.strip_prefix('\n') {
            Some(after) => rest = after,
            None if rest.is_empty() => return Err("EOF".into()),
            None => break,
        }
    }
    let mut fields = Vec::new();
    loop {
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut field = String::new();
            let mut inner = quoted;
            loop {
                let Some(at) = inner.find('"') else {
                    return Err("extraneous or missing \" in quoted-field".into());
                };
                field.push_str(&inner[..at]);
                inner = &inner[at + 1..];
                match inner.chars().next() {
                    Some('"') => {
                        field.push('"');
                        inner = &inner[1..];
                    }
                    Some(',') => {
                        fields.push(field);
                        rest = &inner[1..];
                        break;
                    }
                    None | Some('\n') => {
                        fields.push(field);
                        return Ok(fields);
                    }
                    Some(_) => return Err("extraneous or missing \" in quoted-field".into()),
                }
            }
        } else {
            let end = rest.find([',', '\n']).unwrap_or(rest.len());
            let field = &rest[..end];
            if field.contains('"') {
                return Err("bare \" in non-quoted-field".into());
            }
            fields.push(field.to_string());
            match rest[end..].chars().next() {
                Some(',') => rest = &rest[end + 1..],
                _ => return Ok(fields),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count, device ids and capabilities the CLI reads.
    type Read = (i64, Option<Vec<String>>, Vec<String>);

    fn read(value: &str) -> Result<Read, String> {
        parse_gpus(value).map(|r| (r.count, r.device_ids, r.capabilities))
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// What `docker create --gpus` recorded for these spellings (Docker CLI
    /// 28.2, daemon 20.10; `tests/it/engine.rs` re-checks them on every run).
    #[test]
    fn every_documented_spelling() {
        let gpu = strings(&["gpu"]);
        assert_eq!(read("all"), Ok((-1, None, gpu.clone())));
        assert_eq!(read("2"), Ok((2, None, gpu.clone())));
        assert_eq!(
            read("device=1"),
            Ok((0, Some(strings(&["1"])), gpu.clone()))
        );
        assert_eq!(
            read("\"device=0,1\""),
            Ok((0, Some(strings(&["0", "1"])), gpu.clone()))
        );
        assert_eq!(
            read("\"device=GPU-1,GPU-2\""),
            Ok((0, Some(strings(&["GPU-1", "GPU-2"])), gpu.clone()))
        );
        // Without the CSV quotes: device 0 and a count of 1.
        assert_eq!(
            read("device=0,1"),
            Ok((1, Some(strings(&["0"])), gpu.clone()))
        );
        assert_eq!(
            read("count=2,capabilities=compute"),
            Ok((2, None, strings(&["compute", "gpu"])))
        );
        assert_eq!(
            read("\"capabilities=compute,utility\",count=2"),
            Ok((2, None, strings(&["compute", "utility", "gpu"])))
        );
        assert_eq!(read("driver=nvidia,count=all").map(|r| r.0), Ok(-1));
        assert_eq!(read("options=x=y").map(|r| r.0), Ok(1));
    }

    #[test]
    fn what_the_cli_refuses() {
        for (value, why) in [
            (
                "capabilities=compute,utility,count=2",
                "invalid count (utility)",
            ),
            ("count=2,count=3", "key 'count' can be specified only once"),
            ("2,count=3", "key 'count' can be specified only once"),
            ("count=1.5", "invalid count (1.5)"),
            ("", "EOF"),
            ("count=2,", "invalid count ()"),
            ("devices=0", "unexpected key 'devices'"),
            ("\"device=0,1", "extraneous or missing"),
            ("device=\"0\"", "bare \""),
            ("\"count=2\"x", "extraneous or missing"),
        ] {
            let refused = parse_gpus(value).unwrap_err();
            assert!(refused.contains(why), "{value}: {refused}");
        }
    }

    #[test]
    fn what_the_model_reads() {
        let gpus = |v: &str| parse_gpus(v).unwrap().gpus();
        assert_eq!(gpus("all"), Gpus::All);
        assert_eq!(gpus("-2"), Gpus::All);
        assert_eq!(gpus("\"device=0,1\""), Gpus::Count(2));
        assert_eq!(gpus("\"device=0,0\""), Gpus::Count(1));
        assert_eq!(gpus("0"), Gpus::Count(0));
        let conflict = parse_gpus("device=0,1").unwrap();
        assert!(
            conflict
                .start_refusal()
                .unwrap()
                .contains("cannot set both Count and DeviceIDs")
        );
        assert!(
            parse_gpus("\"device=0,1\"")
                .unwrap()
                .start_refusal()
                .is_none()
        );
        assert!(parse_gpus("capabilities=compute").unwrap().is_nvidia());
        assert!(!parse_gpus("capabilities=tpu").unwrap().is_nvidia());
        assert!(!parse_gpus("driver=amd,count=1").unwrap().is_nvidia());
    }
}

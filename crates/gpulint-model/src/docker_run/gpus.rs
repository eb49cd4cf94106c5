//! The GPUs a run line asks for: `--gpus`, `--device` and CDI names.

use super::*;

impl DockerRun {
    /// How the container gets GPUs, if it does, for messages.
    pub fn gpu_request(&self) -> Option<String> {
        if self.program == "nvidia-docker" {
            return Some("runs under `nvidia-docker`".into());
        }
        if let Some((_, gpus)) = self.option("--gpus") {
            let value = gpus.value.as_deref().unwrap_or("");
            // Podman 5 reads `--gpus` as CDI devices; Podman 4 refuses it
            // (`unknown flag: --gpus`, Debian 12's 4.3).
            return Some(if self.is_podman() {
                format!("asks for GPUs with `--gpus {value}` (Podman 5; Podman 4 has no such flag)")
            } else {
                format!("asks for GPUs with `--gpus {value}`")
            });
        }
        if let Some((_, runtime)) = self.option("--runtime")
            && runtime.value.as_deref() == Some("nvidia")
        {
            return Some("runs under `--runtime=nvidia`".into());
        }
        self.options_named("--device").find_map(|(_, d)| {
            let v = d.value.as_deref()?;
            (v.starts_with("nvidia.com/gpu") || v.starts_with("/dev/nvidia"))
                .then(|| format!("is given `--device {v}`"))
        })
    }

    /// Each `--gpus` option as the Docker CLI reads it (a device request,
    /// or why the CLI refuses the value); `None` for a value only known
    /// at run time.
    pub fn device_requests(&self) -> Vec<Option<Result<DeviceRequest, String>>> {
        self.options_named("--gpus")
            .map(|(_, o)| {
                let value = o.value.as_deref().filter(|_| !o.dynamic)?;
                Some(parse_gpus(value))
            })
            .collect()
    }

    /// The GPUs it asks for: every `--gpus` is a device request of its own
    /// (all wins, counts add); a request for another driver, or a value
    /// only known at run time, adds nothing known.
    pub fn gpus(&self) -> Gpus {
        if self.varies(&["--gpus"]).is_some() {
            return Gpus::Unknown;
        }
        let requests = self.device_requests();
        if requests.is_empty() {
            return self.device_gpus();
        }
        requests
            .into_iter()
            .fold(None, |total: Option<Gpus>, request| {
                let gpus = match request {
                    Some(Ok(r)) if r.is_nvidia() => r.gpus(),
                    _ => Gpus::Unknown,
                };
                Some(total.map_or(gpus, |t| t.combine(gpus)))
            })
            .unwrap_or(Gpus::Unknown)
    }

    /// The NVIDIA GPUs `--device` gives, as a compose service's `devices:`
    /// are counted: a CDI `nvidia.com/gpu=all` is every GPU, any other
    /// CDI name or `/dev/nvidiaN` one each (Podman's and Docker 25's CDI
    /// devices; `AddDevice=` of a Quadlet unit).
    pub(super) fn device_gpus(&self) -> Gpus {
        let mut total: Option<Gpus> = None;
        for (_, option) in self.options_named("--device") {
            let Some(value) = option.value.as_deref().filter(|_| !option.dynamic) else {
                continue;
            };
            let host = value.split(':').next().unwrap_or(value);
            let gpus = match value.strip_prefix("nvidia.com/gpu=") {
                Some("all") => Gpus::All,
                Some(_) => Gpus::Count(1),
                None => match host.strip_prefix("/dev/nvidia") {
                    Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                        Gpus::Count(1)
                    }
                    _ => continue,
                },
            };
            total = Some(total.map_or(gpus, |t| t.combine(gpus)));
        }
        total.unwrap_or(Gpus::Unknown)
    }
}

//! What a service's settings decide together: its effective /dev/shm and its
//! GPU intent.

use super::*;

impl Service {
    pub(super) fn compute_shm_decision(&self) -> ShmDecision {
        if let Some(mount) = self.shm_mounts.last() {
            return ShmDecision::Mount {
                mount: mount.value.clone(),
                node: mount.node,
            };
        }
        if let Some(ipc) = &self.ipc {
            match &ipc.value {
                IpcMode::Host => return ShmDecision::Host { node: ipc.node },
                IpcMode::None => return ShmDecision::Missing { node: ipc.node },
                IpcMode::Service(d) | IpcMode::Container(d) => {
                    return ShmDecision::Donor {
                        donor: d.clone(),
                        node: ipc.node,
                    };
                }
                IpcMode::Unknown(_) | IpcMode::Invalid(_) => {
                    return ShmDecision::Unknown { node: ipc.node };
                }
                IpcMode::Private | IpcMode::Shareable => {}
            }
        }
        self.size_decision()
    }

    /// What `shm_size` alone gives (the default without one).
    pub(crate) fn size_decision(&self) -> ShmDecision {
        match &self.shm_size {
            None => ShmDecision::Default,
            Some(s) => match s.value {
                SizeValue::Bytes { bytes: 0, .. } | SizeValue::Dropped { .. } => {
                    ShmDecision::Default
                }
                SizeValue::Bytes { bytes, .. } => ShmDecision::Sized {
                    bytes,
                    node: s.node,
                },
                _ => ShmDecision::Unknown { node: s.node },
            },
        }
    }

    pub(crate) fn compute_gpu_intent(&self) -> GpuIntent {
        let mut gpu = GpuIntent::default();
        let mut count: Option<Gpus> = None;
        let mut reserve = |gpu: &mut GpuIntent, vendor: Vendor, what: String, at: Src, c: Gpus| {
            if gpu.reserved.is_none() {
                gpu.reserved = Some(what);
                gpu.evidence = Some(at);
            }
            if gpu.vendor.is_none() || vendor == Vendor::Nvidia {
                gpu.vendor = Some(vendor);
            }
            count = Some(count.map_or(c, |old| old.combine(c)));
        };

        for request in &self.device_requests {
            let vendor = request.vendor();
            if vendor == Vendor::Other && request.driver.as_ref().is_some_and(|d| d.value != "cdi")
            {
                continue;
            }
            let what = if request.from_gpus_field {
                "`gpus:`".to_string()
            } else {
                "a device reservation".to_string()
            };
            reserve(&mut gpu, vendor, what, request.node, request.gpu_count());
        }
        for device in &self.devices {
            match device_grant(&device.value) {
                DeviceGrant::Gpu {
                    vendor,
                    what,
                    count,
                } => reserve(&mut gpu, vendor, what, device.node, count),
                DeviceGrant::Rdma => gpu.rdma = true,
                DeviceGrant::Other => {}
            }
        }
        if let Some((vendor, what, at, c)) = self.runtime_gpus() {
            reserve(&mut gpu, vendor, what.to_string(), at, c);
        }
        gpu.count = count;

        for env in &self.environment {
            let name = env.name.as_str();
            if name.starts_with("NCCL_") || name.starts_with("TORCH_NCCL_") {
                gpu.nccl_env = true;
            }
            if selects_rdma(name, env.value.as_deref()) {
                gpu.rdma = true;
            }
        }
        let (launcher, parallelism) = detect_launcher(&self.command_line);
        gpu.launcher = launcher;
        gpu.parallelism = parallelism;
        gpu
    }

    /// The GPUs a `runtime:` gives: `nvidia` those `NVIDIA_VISIBLE_DEVICES`
    /// names (none when it is `void`, `none` or empty), `amd` an unknown
    /// number.
    fn runtime_gpus(&self) -> Option<(Vendor, &'static str, Src, Gpus)> {
        let runtime = self.runtime.as_ref()?;
        match runtime.value.as_str() {
            "nvidia" => {
                let visible = self.env("NVIDIA_VISIBLE_DEVICES").map(|e| e.value.clone());
                let disabled =
                    matches!(&visible, Some(Some(v)) if matches!(v.as_str(), "void" | "none" | ""));
                if disabled {
                    return None;
                }
                let c = match &visible {
                    Some(Some(v)) if v == "all" => Gpus::All,
                    Some(Some(v)) => Gpus::Count(v.split(',').count() as u64),
                    _ => Gpus::Unknown,
                };
                Some((Vendor::Nvidia, "`runtime: nvidia`", runtime.node, c))
            }
            "amd" => Some((Vendor::Amd, "`runtime: amd`", runtime.node, Gpus::Unknown)),
            _ => None,
        }
    }
}

/// What one `devices:` entry gives the container.
enum DeviceGrant {
    Gpu {
        vendor: Vendor,
        what: String,
        count: Gpus,
    },
    /// An InfiniBand device: the container can use RDMA.
    Rdma,
    Other,
}

/// Reads a `devices:` entry: a CDI name (`nvidia.com/gpu=0`), a GPU device
/// node (`/dev/nvidia0`, `/dev/kfd`) or an InfiniBand one.
fn device_grant(d: &str) -> DeviceGrant {
    let host = d.split(':').next().unwrap_or(d);
    let gpu = |vendor, what, count| DeviceGrant::Gpu {
        vendor,
        what,
        count,
    };
    if let Some(rest) = d.strip_prefix("nvidia.com/gpu=") {
        let count = if rest == "all" {
            Gpus::All
        } else {
            Gpus::Count(1)
        };
        gpu(Vendor::Nvidia, format!("the CDI device `{d}`"), count)
    } else if d.starts_with("amd.com/gpu=") {
        gpu(Vendor::Amd, format!("the CDI device `{d}`"), Gpus::Unknown)
    } else if host.starts_with("/dev/nvidia")
        && host["/dev/nvidia".len()..]
            .chars()
            .all(|c| c.is_ascii_digit())
        && host.len() > "/dev/nvidia".len()
    {
        gpu(
            Vendor::Nvidia,
            format!("the device `{host}`"),
            Gpus::Count(1),
        )
    } else if host == "/dev/kfd" {
        gpu(
            Vendor::Amd,
            "the ROCm device `/dev/kfd`".into(),
            Gpus::Unknown,
        )
    } else if host.starts_with("/dev/infiniband") {
        DeviceGrant::Rdma
    } else {
        DeviceGrant::Other
    }
}

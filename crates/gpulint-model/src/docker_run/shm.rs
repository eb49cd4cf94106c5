//! The /dev/shm a run line gives its container: `--ipc`, `--shm-size` and
//! /dev/shm mounts.

use super::*;

impl DockerRun {
    /// The `-v`, `--tmpfs` or `--mount` option that mounts something at
    /// `/dev/shm`, if one does.
    pub fn dev_shm_mount(&self) -> Option<&RunOption> {
        let at_dev_shm = |target: &str| target.trim_end_matches('/') == "/dev/shm";
        self.options.iter().find(|o| {
            let Some(value) = o.value.as_deref() else {
                return false;
            };
            match o.name.as_str() {
                // `-v /dev/shm` alone is an anonymous volume mounted there.
                "--volume" => match value.split_once(':') {
                    Some((_, rest)) => rest.split(':').next().is_some_and(at_dev_shm),
                    None => at_dev_shm(value),
                },
                "--tmpfs" => at_dev_shm(value.split(':').next().unwrap_or("")),
                "--mount" => value.split(',').any(|part| {
                    part.split_once('=').is_some_and(|(k, v)| {
                        matches!(k, "target" | "destination" | "dst") && at_dev_shm(v)
                    })
                }),
                _ => false,
            }
        })
    }

    /// Why the engine refuses the container's `--ipc` value, as written
    /// (moby `IpcMode.Valid`: empty, `none`, `private`, `shareable`, `host`
    /// or `container:NAME`; Podman also takes `ns:PATH`).
    pub fn ipc_refusal(&self, ipc: &RunOption) -> Option<String> {
        let value = ipc.value.as_deref().filter(|_| !ipc.dynamic)?;
        let valid = match value.split_once(':') {
            Some(("container", name)) => !name.is_empty(),
            Some(("ns", path)) => self.is_podman() && !path.is_empty(),
            Some(_) => false,
            None => matches!(value, "" | "none" | "private" | "shareable" | "host"),
        };
        (!valid).then(|| {
            let refusal = if self.is_podman() {
                "Podman refuses it"
            } else {
                "the engine refuses it: `Invalid IPC mode`"
            };
            format!("`--ipc {value}` is no IPC mode: {refusal}")
        })
    }

    /// The container's `/dev/shm`, and the option that decided it.
    pub fn shm(&self) -> Shm {
        // A variable that holds one of them on some values only.
        if let Some(why) = self.varies(&["--ipc", "--volume", "--tmpfs", "--mount", "--shm-size"]) {
            return Shm::new(ShmKind::Unknown, None, why).decided_by(ShmSetting::Unresolved, None);
        }
        let shm_size = self
            .option("--shm-size")
            .map(|(_, o)| o)
            .filter(|o| !o.dynamic && o.value.is_some());
        let ipc = self.option("--ipc").map(|(_, o)| o);
        if let Some(refused) = self.refused_shm(shm_size, ipc) {
            return refused;
        }
        // A mount at /dev/shm is the container's whatever its IPC mode:
        // the engine adds the IPC namespace's /dev/shm only where no mount
        // is (moby `container.IpcMounts`, `HasMountFor("/dev/shm")`;
        // Podman's `MountExists(..., "/dev/shm")`).
        if let Some(mount) = self.dev_shm_mount() {
            return mount_shm(mount).decided_by(ShmSetting::Mount, Some(mount.range));
        }
        if let Some(shm) = ipc.and_then(ipc_shm) {
            return shm;
        }
        if let Some(o) = ipc {
            match o.value.as_deref() {
                Some("private" | "shareable" | "") | None if !o.dynamic => {}
                _ => return run_time(Some(o)),
            }
        }
        self.size_shm()
    }

    /// The refusals that decide the container whatever else is set: a size
    /// the CLI cannot read, an IPC mode the engine does not know, and
    /// Podman's refusal of a size with the host's or no IPC namespace.
    fn refused_shm(&self, shm_size: Option<&RunOption>, ipc: Option<&RunOption>) -> Option<Shm> {
        // A size the CLI cannot read refuses the container whatever else
        // decides /dev/shm (the Docker CLI's `--shm-size` flag, Podman's
        // "unable to translate --shm-size").
        if let Some(o) = shm_size {
            let shm = Shm::of_size(
                &parse_compose_size(o.value.as_deref().unwrap_or("")),
                "--shm-size",
            );
            if shm.kind == ShmKind::Refused {
                return Some(shm.decided_by(ShmSetting::Size, Some(o.range)));
            }
        }
        if let Some(o) = ipc {
            if let Some(why) = self.ipc_refusal(o) {
                return Some(
                    Shm::new(ShmKind::Refused, None, why)
                        .decided_by(ShmSetting::Ipc, Some(o.range)),
                );
            }
            // Podman refuses any size with the host's or no IPC namespace:
            // "cannot set shmsize when running in the {host } IPC
            // Namespace" (Docker ignores it).
            if let (Some(mode @ ("host" | "none")), Some(size)) = (o.value.as_deref(), shm_size)
                && self.is_podman()
            {
                return Some(Shm::new(
                    ShmKind::Refused,
                    None,
                    format!("Podman refuses `--shm-size` with `--ipc {mode}`: it cannot set a size for that IPC namespace"),
                )
                .decided_by(ShmSetting::Size, Some(size.range)));
            }
        }
        None
    }

    /// The /dev/shm `--shm-size` gives, or the default when no size is
    /// written.
    fn size_shm(&self) -> Shm {
        match self.option("--shm-size") {
            Some((_, o)) if o.dynamic || o.value.is_none() => run_time(Some(o)),
            // `--shm-size=0` is written, so a fix must not add another.
            Some((_, o)) => {
                let size = parse_compose_size(o.value.as_deref().unwrap_or(""));
                let shm = match size {
                    // Podman: "When size is 0, there is no limit"
                    // (podman-run(1)), where Docker means its default.
                    SizeValue::Bytes { bytes: 0, .. } if self.is_podman() => Shm::new(
                        ShmKind::Unbounded,
                        None,
                        "--shm-size 0: no limit, as Podman reads it",
                    ),
                    size => Shm::of_size(&size, "--shm-size"),
                };
                shm.decided_by(ShmSetting::Size, Some(o.range))
            }
            None => match &self.uncertain {
                Some(why) => Shm::new(ShmKind::Unknown, None, why.clone())
                    .decided_by(ShmSetting::Unresolved, None),
                // containers.conf's `shm_size = "65536k"`, which Podman
                // 4.3 reads as 65,536,000 bytes (its judge's HostConfig).
                None if self.is_podman() => Shm::new(
                    ShmKind::Default,
                    Some(PODMAN_DEFAULT_SHM_BYTES),
                    "Podman's default",
                ),
                None => Shm::default_of("Docker"),
            },
        }
    }
}

/// A /dev/shm decided by an option (or, at `None`, words) only known at run
/// time.
fn run_time(at: Option<&RunOption>) -> Shm {
    Shm::new(ShmKind::Unknown, None, "options only known at run time")
        .decided_by(ShmSetting::Unresolved, at.map(|o| o.range))
}

/// The /dev/shm `--ipc host`, `none` or `container:NAME` gives: the host's,
/// none, or the other container's.
fn ipc_shm(o: &RunOption) -> Option<Shm> {
    let (shm, setting) = match o.value.as_deref() {
        Some("host") => (Shm::new(ShmKind::Host, None, "--ipc host"), ShmSetting::Ipc),
        Some("none") => (
            Shm::new(ShmKind::Missing, None, "--ipc none"),
            ShmSetting::Ipc,
        ),
        Some(other) if other.starts_with("container:") => (
            Shm::new(
                ShmKind::Unknown,
                None,
                format!("the IPC namespace of {other}"),
            ),
            ShmSetting::Donor,
        ),
        _ => return None,
    };
    Some(shm.decided_by(setting, Some(o.range)))
}

/// The `/dev/shm` a `--volume`, `--tmpfs` or `--mount` at `/dev/shm` gives.
pub(super) fn mount_shm(mount: &RunOption) -> Shm {
    let value = mount.value.as_deref().unwrap_or("");
    match mount.name.as_str() {
        "--volume" if value.starts_with("/dev/shm:") => {
            Shm::new(ShmKind::Host, None, "a bind of the host's /dev/shm")
        }
        "--volume" => Shm::new(ShmKind::Disk, None, "a volume mounted at /dev/shm"),
        "--tmpfs" => match value
            .split_once(':')
            .and_then(|(_, options)| tmpfs_size_option(options))
        {
            Some(size) => Shm::of_tmpfs_size(&parse_tmpfs_size_option(size), "--tmpfs size"),
            None => Shm::new(ShmKind::Unbounded, None, "a tmpfs at /dev/shm with no size"),
        },
        _ => {
            // `--mount` fields (docker/cli `opts/mount.go`): the type is
            // `volume` unless written.
            let field = |names: &[&str]| {
                value.split(',').find_map(|part| {
                    let (key, v) = part.split_once('=')?;
                    names.contains(&key.trim()).then_some(v)
                })
            };
            match field(&["type"]).unwrap_or("volume") {
                "tmpfs" => match field(&["tmpfs-size"]) {
                    Some(size) => Shm::of_size(&parse_compose_size(size), "--mount tmpfs-size"),
                    None => Shm::new(ShmKind::Unbounded, None, "a tmpfs at /dev/shm with no size"),
                },
                "bind"
                    if field(&["source", "src"])
                        .is_some_and(|s| s.trim_end_matches('/') == "/dev/shm") =>
                {
                    Shm::new(ShmKind::Host, None, "a bind of the host's /dev/shm")
                }
                "bind" => Shm::new(ShmKind::Disk, None, "a bind mount at /dev/shm"),
                // A volume of another driver, or one given driver options,
                // may be anything.
                "volume" if field(&["volume-driver", "volume-opt"]).is_none() => {
                    Shm::new(ShmKind::Disk, None, "a volume mounted at /dev/shm")
                }
                _ => Shm::new(ShmKind::Unknown, None, "a mount at /dev/shm"),
            }
        }
    }
}

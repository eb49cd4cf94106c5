//! Reading a service's written keys into the model: env files, builds,
//! mounts, environment, devices and ulimits.

use super::*;

/// `env_file: a.env`, `[a.env, b.env]` or `[{path: a.env, required: false}]`.
pub(super) fn read_env_files(map: &Node) -> Vec<EnvFileEntry> {
    let Some(entry) = map.get("env_file") else {
        return Vec::new();
    };
    let items: Vec<&Arc<Node>> = match &entry.kind {
        Kind::Sequence(items) => items.iter().collect(),
        _ if entry.is_null() => Vec::new(),
        _ => vec![entry],
    };
    items
        .into_iter()
        .filter_map(|item| {
            if let Some(path) = text_of(item) {
                return Some(EnvFileEntry {
                    path,
                    required: true,
                    node: item.src,
                });
            }
            let path = scalar(item, "path")?;
            let required = scalar(item, "required").is_none_or(|r| r.value != "false");
            Some(EnvFileEntry {
                path: path.value,
                required,
                node: item.src,
            })
        })
        .collect()
}

pub(super) fn read_build(map: &Node) -> Option<BuildSpec> {
    let entry = map.entry("build")?;
    let build = &entry.value;
    let known = |node: &Node| node.str().map(str::to_string);
    let mut spec = BuildSpec {
        key: Some(entry.key_src),
        ..BuildSpec::default()
    };
    if build.is_mapping() {
        let field = |key: &str| build.get(key).and_then(|n| known(n));
        spec.context = build.entry("context").and_then(|e| {
            Some(Spanned {
                value: known(&e.value)?,
                node: e.value.src,
                key: Some(e.key_src),
            })
        });
        spec.dockerfile = field("dockerfile");
        spec.target = field("target");
        spec.dockerfile_inline = scalar(build, "dockerfile_inline");
        if let Some(args) = build.get("args") {
            match &args.kind {
                Kind::Mapping(entries) => {
                    for e in entries {
                        if let Some(v) = known(&e.value) {
                            spec.args.insert(e.key.clone(), v);
                        }
                    }
                }
                Kind::Sequence(items) => {
                    for item in items {
                        if let Some((k, v)) = known(item).as_deref().and_then(|t| t.split_once('='))
                        {
                            spec.args.insert(k.to_string(), v.to_string());
                        }
                    }
                }
                Kind::Scalar { .. } => {}
            }
        }
    } else if !build.is_null() {
        spec.context = known(build).map(|value| Spanned {
            value,
            node: build.src,
            key: Some(entry.key_src),
        });
    }
    Some(spec)
}

pub(super) fn size_entry(map: &Node, key: &str) -> Option<Spanned<SizeValue>> {
    let entry = map.entry(key)?;
    if entry.value.is_null() {
        return None;
    }
    let value = match &entry.value.kind {
        Kind::Scalar { raw, value, .. } => crate::size::parse_compose_yaml_size(
            raw,
            entry.value.is_plain(),
            entry.value.tag(),
            value,
        ),
        _ => SizeValue::Invalid {
            text: String::new(),
            reason: "expected a size such as \"8gb\", not a list or mapping".into(),
        },
    };
    Some(Spanned {
        value,
        node: entry.value.src,
        key: Some(entry.key_src),
    })
}

pub(super) fn is_dev_shm(target: &str) -> bool {
    let t = target.trim_end_matches('/');
    t == "/dev/shm"
}

/// What a volume `source` mounted at /dev/shm is: a named volume the
/// project declares for the local driver with `type: tmpfs` is a tmpfs
/// (Docker's local driver mounts it as `mount -t tmpfs -o <o>`), anything
/// else disk. An external volume is made elsewhere: disk, as said before.
pub(super) fn named_volume_mount(named_volumes: Option<&Node>, source: &str) -> ShmMount {
    let declared = named_volumes
        .filter(|_| names_a_volume(source))
        .and_then(|volumes| volumes.get(source))
        .filter(|volume| volume.is_mapping());
    let Some(volume) = declared else {
        return ShmMount::Volume;
    };
    let text = |path: &[&str]| volume.get_path(path).and_then(|node| text_of(node));
    let local = text(&["driver"]).is_none_or(|driver| driver == "local");
    let external = text(&["external"]).is_some_and(|e| e == "true");
    if !local || external || text(&["driver_opts", "type"]).as_deref() != Some("tmpfs") {
        return ShmMount::Volume;
    }
    let size = text(&["driver_opts", "o"])
        .as_deref()
        .and_then(tmpfs_size_option)
        .map(parse_tmpfs_size_option);
    ShmMount::VolumeTmpfs {
        volume: source.to_string(),
        size,
    }
}

pub(super) fn read_shm_mounts(map: &Node, named_volumes: Option<&Node>) -> Vec<Spanned<ShmMount>> {
    let mut mounts = Vec::new();
    if let Some(volumes) = map.get("volumes") {
        for item in volumes.items() {
            if let Some(text) = text_of(item) {
                let parts: Vec<&str> = text.split(':').collect();
                // `/dev/shm` alone is an anonymous volume there: disk, like a named one.
                let mount = if parts.len() == 1 && is_dev_shm(parts[0]) {
                    Some(ShmMount::Volume)
                } else if parts.len() >= 2 && is_dev_shm(parts[1]) {
                    Some(if is_dev_shm(parts[0]) {
                        ShmMount::HostBind
                    } else {
                        named_volume_mount(named_volumes, parts[0])
                    })
                } else {
                    None
                };
                if let Some(mount) = mount {
                    mounts.push(Spanned {
                        value: mount,
                        node: item.src,
                        key: None,
                    });
                }
            } else if item.is_mapping() {
                let target = item.get("target").and_then(|t| text_of(t));
                if !target.as_deref().is_some_and(is_dev_shm) {
                    continue;
                }
                let kind = item.get("type").and_then(|t| text_of(t));
                let mount = match kind.as_deref() {
                    Some("tmpfs") => {
                        let size = item.get_path(&["tmpfs", "size"]).and_then(|size| {
                            Some(match &size.kind {
                                Kind::Scalar { raw, value, .. } => match value {
                                    Interpolated::Text(t) => crate::size::parse_compose_size(t),
                                    _ => crate::size::parse_compose_yaml_size(
                                        raw, false, None, value,
                                    ),
                                },
                                _ => return None,
                            })
                        });
                        ShmMount::Tmpfs(size)
                    }
                    _ => {
                        let source = item.get("source").and_then(|s| text_of(s));
                        match source.as_deref() {
                            Some(source) if is_dev_shm(source) => ShmMount::HostBind,
                            Some(source) if kind.as_deref().is_none_or(|k| k == "volume") => {
                                named_volume_mount(named_volumes, source)
                            }
                            _ => ShmMount::Volume,
                        }
                    }
                };
                mounts.push(Spanned {
                    value: mount,
                    node: item.src,
                    key: None,
                });
            }
        }
    }
    if let Some(tmpfs) = map.get("tmpfs") {
        let items: Vec<&Arc<Node>> = match &tmpfs.kind {
            Kind::Sequence(items) => items.iter().collect(),
            _ => vec![tmpfs],
        };
        for item in items {
            let Some(text) = text_of(item) else { continue };
            let (target, options) = text.split_once(':').unwrap_or((&text, ""));
            if !is_dev_shm(target) {
                continue;
            }
            let size = tmpfs_size_option(options).map(parse_tmpfs_size_option);
            mounts.push(Spanned {
                value: ShmMount::Tmpfs(size),
                node: item.src,
                key: None,
            });
        }
    }
    mounts
}

/// `environment:` as a mapping (one file) or as the `KEY=value` list
/// Compose makes of it when it merges; a variable written without a
/// value takes the project environment's.
pub(super) fn read_environment(
    map: &Node,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<ComposeEnv> {
    let Some(environment) = map.get("environment") else {
        return Vec::new();
    };
    let mut vars = Vec::new();
    match &environment.kind {
        Kind::Sequence(items) => {
            for item in items {
                let Some(raw) = item.raw() else { continue };
                let (name, value) = match raw.split_once('=') {
                    Some((name, _)) => (
                        name,
                        item.str()
                            .and_then(|t| t.split_once('='))
                            .map(|(_, v)| v.to_string()),
                    ),
                    // `- NAME` takes the value from the project's environment.
                    None => (raw, env(raw.trim())),
                };
                vars.push(ComposeEnv {
                    name: name.trim().to_string(),
                    value,
                    at: item.src,
                    key: item.entry_key,
                    from_file: None,
                });
            }
        }
        Kind::Mapping(entries) => {
            for e in entries {
                let value = if e.value.is_null() {
                    env(&e.key)
                } else {
                    e.value.str().map(str::to_string)
                };
                vars.push(ComposeEnv {
                    name: e.key.clone(),
                    value,
                    at: if e.value.is_null() {
                        e.key_src
                    } else {
                        e.value.src
                    },
                    key: Some(e.key_src),
                    from_file: None,
                });
            }
        }
        Kind::Scalar { .. } => {}
    }
    vars
}

pub(super) fn read_command(map: &Node) -> (String, Option<Src>) {
    let mut line = String::new();
    let mut node = None;
    for key in ["entrypoint", "command"] {
        if let Some(value) = map.get(key) {
            let parts = string_list(value);
            if !parts.is_empty() {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(&parts.join(" "));
                node = Some(value.src);
            }
        }
    }
    (line, node)
}

/// The device requests of `devices` and `gpus`, the `devices` key, and
/// what under `devices` is not a request: compose-spec.json wants an array
/// of objects, and Compose 2.40 refuses anything else there (a mapping, a
/// null, a string even once interpolated, an item that is not a mapping);
/// `!reset` removes the key.
pub(super) fn read_device_requests(map: &Node) -> (Vec<DeviceRequest>, Option<Src>, Option<Src>) {
    let mut requests = Vec::new();
    let mut malformed = None;
    let reservations = map.get_path(&["deploy", "resources", "reservations"]);
    let devices = reservations.and_then(|r| r.entry("devices"));
    if let Some(devices) = devices {
        match &devices.value.kind {
            _ if devices.value.tag.as_deref() == Some("!reset") => {}
            Kind::Sequence(items) => {
                for item in items {
                    if item.is_mapping() {
                        requests.push(read_device_request(item, false));
                    } else if malformed.is_none() {
                        malformed = Some(item.src);
                    }
                }
            }
            _ => malformed = Some(devices.value.src),
        }
    }
    if let Some(gpus) = map.get("gpus") {
        requests.extend(gpus_requests(gpus));
    }
    (requests, devices.map(|d| d.key_src), malformed)
}

/// The device requests `gpus:` makes: one per item of the list, or one for
/// all GPUs for `all`. Any other scalar (`1`, `"1"`) is refused by the
/// schema before compose-go's `transformGpus` would read it as all GPUs:
/// PROJ001 reports it, and it requests nothing (Compose creates nothing).
pub(super) fn gpus_requests(gpus: &Node) -> Vec<DeviceRequest> {
    match &gpus.kind {
        Kind::Sequence(items) => items
            .iter()
            .filter(|i| i.is_mapping())
            .map(|i| read_device_request(i, true))
            .collect(),
        Kind::Scalar { .. } if gpus.str() == Some("all") => vec![DeviceRequest {
            node: gpus.src,
            driver: None,
            count: Some(Spanned {
                value: "all".into(),
                node: gpus.src,
                key: None,
            }),
            device_ids: None,
            capabilities: None,
            from_gpus_field: true,
        }],
        _ => Vec::new(),
    }
}

pub(super) fn read_device_request(item: &Node, from_gpus_field: bool) -> DeviceRequest {
    let list = |key: &str| {
        item.entry(key).map(|e| Spanned {
            value: string_list(&e.value),
            node: e.value.src,
            key: Some(e.key_src),
        })
    };
    DeviceRequest {
        node: item.src,
        driver: scalar(item, "driver"),
        count: scalar(item, "count"),
        device_ids: list("device_ids"),
        capabilities: list("capabilities"),
        from_gpus_field,
    }
}

pub(super) fn read_ulimits(map: &Node) -> Ulimits {
    let Some(entry) = map.entry("ulimits") else {
        return Ulimits::default();
    };
    let ulimits = &entry.value;
    let int = |node: &Node| node.str().and_then(|s| s.trim().parse::<i64>().ok());
    let read = |e: &crate::syntax::tree::Entry| {
        let (soft, hard) = if e.value.is_mapping() {
            (
                e.value.get("soft").and_then(|s| int(s)),
                e.value.get("hard").and_then(|h| int(h)),
            )
        } else {
            let v = int(&e.value);
            (v, v)
        };
        Ulimit {
            key: e.key_src,
            value_node: e.value.src,
            soft,
            hard,
        }
    };
    let find = |name: &str| ulimits.entry(name).map(read);
    let others = ulimits
        .entries()
        .iter()
        .filter(|e| !matches!(e.key.as_str(), "memlock" | "stack"))
        .map(|e| (e.key.clone(), read(e)))
        .collect();
    Ulimits {
        node: Some(entry.key_src),
        memlock: find("memlock"),
        stack: find("stack"),
        others,
    }
}

pub(super) fn read_misplaced_resources(map: &Node) -> Vec<Spanned<String>> {
    let mut found = Vec::new();
    for section in ["reservations", "limits"] {
        let Some(resources) = map.get_path(&["deploy", "resources", section]) else {
            continue;
        };
        for entry in resources.entries() {
            if is_gpu_resource_name(&entry.key) {
                found.push(Spanned {
                    value: entry.key.clone(),
                    node: entry.value.src,
                    key: Some(entry.key_src),
                });
            }
        }
    }
    found
}

//! What Compose refuses in a merged project that its schema does not
//! decide (the schema is applied as each file is merged, in `load`, by
//! [`crate::schema::compose`]), found before any container is created
//! (compose-go v2.9.1: `loader/validate.go` `checkConsistency`, the
//! `depends_on` that `loader/normalize.go` adds for `ipc: service:X`, and
//! the values Compose parses later: sizes, device counts), each at the
//! value that causes it.

use super::{Place, Project, Refusal, RefusalKind};
use crate::model::compose::{IpcMode, Service};
use crate::model::size::SizeValue;
use crate::schema::{Leaf, LeafKind};
use crate::syntax::tree::{Kind, Node};
use foldhash::{HashSet, HashSetExt};
use gpulint_base::codes::RuleCode;

pub fn validate(project: &mut Project, root: Option<&Node>, schema_leaves: &[Leaf]) {
    project.refused_by_schema = refused_by_schema(project, schema_leaves);
    let Some(root) = root else {
        return;
    };
    let declared = |section: &str| -> HashSet<String> {
        root.get(section)
            .map(|s| s.entries().iter().map(|e| e.key.clone()).collect())
            .unwrap_or_default()
    };
    let volumes = declared("volumes");
    let networks = declared("networks");
    let secrets = declared("secrets");
    let configs = declared("configs");
    let mut found: Vec<Refusal> = Vec::new();
    let services = root.get("services");
    for service in &project.services {
        let Some(model) = services.and_then(|s| s.get(&service.name)) else {
            continue;
        };
        let mut refuse = |message: String, at: Place, kind: RefusalKind| {
            found.push(Refusal {
                message,
                at,
                kind,
                service: Some(service.name.clone()),
            });
        };
        undefined_references(
            service,
            model,
            &volumes,
            &networks,
            &secrets,
            &configs,
            &mut refuse,
        );
        duplicate_mounts(service, model, &mut refuse);
        device_requests(service, &mut refuse);
        unreadable_sizes(service, &mut refuse);
        shell_dependent_sizes(service, &mut refuse);
    }
    dependencies(project, services, &mut found);
    // A file Compose would not pick by itself, judged alone, that names
    // what no file of it defines is a fragment users combine with others
    // (`-f docker-compose.yml -f extensions/fleet/fleet-compose.yml`): the
    // missing definitions are elsewhere, not a mistake in it.
    if is_lone_fragment(project) {
        for refusal in &mut found {
            if refusal.names_undefined() {
                refusal.kind = RefusalKind::MissingFile;
            }
        }
    }
    // A `.env` Compose cannot read refuses the project by itself, and the
    // variables it would set are unknown: what only the shell could settle
    // is not the question then (its message would say the `.env` does not
    // set them).
    if refuses_its_dotenv(project) {
        found.retain(|r| r.kind != RefusalKind::UnlessShellSets);
    }
    // What the schema refused where a rule with its own fix reports it
    // (GPU002's missing `capabilities`, GPU011's `nvidia.com/gpu` under
    // `deploy.resources`) is that rule's to say.
    let reported_by_rules: Vec<Place> = found
        .iter()
        .filter(|r| {
            matches!(
                r.kind,
                RefusalKind::ConfigReportedBy(RuleCode::GPU002 | RuleCode::GPU011)
            )
        })
        .map(|r| r.at)
        .collect();
    project
        .refusals
        .retain(|r| r.kind != RefusalKind::Config || !reported_by_rules.contains(&r.at));
    for refusal in found {
        if !project.refusals.contains(&refusal) {
            project.refusals.push(refusal);
        }
    }
    mark_services_refused(project);
}

/// Whether Compose refuses the project's `.env` itself.
fn refuses_its_dotenv(project: &Project) -> bool {
    project.refusals.iter().any(|r| {
        r.kind == RefusalKind::Config
            && project
                .files
                .get(r.at.file() as usize)
                .is_some_and(|f| f.role == super::FileRole::Env)
    })
}

/// Compose refuses the whole project: no container is created, and each
/// service says why.
fn mark_services_refused(project: &mut Project) {
    let refused = project
        .refusals
        .iter()
        .find(|r| r.kind != RefusalKind::UnlessShellSets)
        .map(|r| r.message.clone());
    if let Some(why) = refused {
        for service in &mut project.services {
            service.refused.get_or_insert_with(|| why.clone());
        }
    }
}

/// The services with a value the schema refuses that no rule with its own
/// fix reports: a device request without `capabilities` is GPU002's, a
/// Kubernetes resource under `deploy.resources` GPU011's.
fn refused_by_schema(project: &Project, leaves: &[Leaf]) -> Vec<String> {
    let mut refused: Vec<String> = Vec::new();
    for leaf in leaves {
        let [section, name, rest @ ..] = leaf.path.as_slice() else {
            continue;
        };
        if section != "services" || refused.contains(name) {
            continue;
        }
        let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
        let reported_by_a_rule = match (&leaf.kind, rest.as_slice()) {
            (LeafKind::Missing(missing), ["deploy", "resources", "reservations", "devices", _]) => {
                missing == &["capabilities"]
            }
            (LeafKind::Unknown(unknown), ["deploy", "resources", ..]) => project
                .services
                .iter()
                .find(|s| &s.name == name)
                .is_some_and(|service| {
                    unknown.iter().all(|key| {
                        service
                            .misplaced_gpu_resources
                            .iter()
                            .any(|r| &r.value == key)
                    })
                }),
            _ => false,
        };
        if !reported_by_a_rule {
            refused.push(name.clone());
        }
    }
    refused
}

/// `C:\data:/data`, `a:/data`: compose-go's `ParseVolume` reads a letter
/// and a colon before a slash as a Windows drive, a path, not a name.
fn starts_with_drive(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'/' | b'\\')
}

#[allow(clippy::too_many_arguments)]
fn undefined_references(
    service: &Service,
    model: &Node,
    volumes: &HashSet<String>,
    networks: &HashSet<String>,
    secrets: &HashSet<String>,
    configs: &HashSet<String>,
    refuse: &mut impl FnMut(String, Place, RefusalKind),
) {
    let name = &service.name;
    for item in model.get("volumes").map(|v| v.items()).unwrap_or_default() {
        let source = match &item.kind {
            Kind::Scalar { .. } => {
                let Some(text) = item.str() else { continue };
                if starts_with_drive(text) {
                    continue;
                }
                let parts: Vec<&str> = text.split(':').collect();
                if parts.len() < 2 {
                    continue;
                }
                parts[0].to_string()
            }
            Kind::Mapping(_) => {
                let kind = item.get("type").and_then(|t| t.str()).unwrap_or("volume");
                if kind != "volume" {
                    continue;
                }
                match item.get("source").and_then(|s| s.str()) {
                    Some(source) => source.to_string(),
                    None => continue,
                }
            }
            Kind::Sequence(_) => continue,
        };
        let is_name = match &item.kind {
            Kind::Mapping(_) => !source.is_empty(),
            _ => crate::model::compose::names_a_volume(&source),
        };
        if is_name && !volumes.contains(&source) && gpulint_base::redact::is_placeholder(&source) {
            // `LOCAL_MODEL_PATH=<your_path>` in a shipped `.env`: a prompt
            // to fill in, refused until the user (or the shell, whose
            // variables win over the `.env`) does.
            refuse(
                format!(
                    "a volume is mounted from `{source}`, a placeholder to fill in: Compose reads it as the name of a volume no file declares"
                ),
                Place::Node(item.src),
                RefusalKind::UnlessShellSets,
            );
        } else if is_name && !volumes.contains(&source) {
            refuse(
                format!(
                    "service `{name}` refers to undefined volume `{source}` (a relative path needs `./`; a named volume is declared under the top-level `volumes:`)"
                ),
                Place::Node(item.src),
                RefusalKind::Config,
            );
        }
    }
    if let Some(list) = model.get("networks") {
        let names: Vec<(String, crate::syntax::tree::Src)> = match &list.kind {
            Kind::Mapping(entries) => entries.iter().map(|e| (e.key.clone(), e.key_src)).collect(),
            Kind::Sequence(items) => items
                .iter()
                .filter_map(|i| Some((i.str()?.to_string(), i.src)))
                .collect(),
            Kind::Scalar { .. } => Vec::new(),
        };
        for (network, at) in names {
            if network == "default" || networks.contains(&network) {
                continue;
            }
            // Networks alone: a project that joins one and declares none
            // is how a fragment joins its base's network, while a named
            // volume used without any `volumes:` is the common mistake of
            // a project that runs on its own.
            if networks.is_empty() {
                refuse(
                    format!(
                        "undefined network `{network}`, and no file of the project declares any network"
                    ),
                    Place::Node(at),
                    RefusalKind::UnlessMerged,
                );
            } else {
                refuse(
                    format!("service `{name}` refers to undefined network `{network}`"),
                    Place::Node(at),
                    RefusalKind::Config,
                );
            }
        }
    }
    for (section, declared) in [("secrets", secrets), ("configs", configs)] {
        for item in model.get(section).map(|v| v.items()).unwrap_or_default() {
            let source = match &item.kind {
                Kind::Scalar { .. } => item.str().map(str::to_string),
                // A long form without `source` names the empty one, which
                // no project declares.
                Kind::Mapping(_) => match item.get("source") {
                    None => Some(String::new()),
                    Some(source) => source.str().map(str::to_string),
                },
                Kind::Sequence(_) => None,
            };
            if let Some(source) = source
                && !declared.contains(&source)
            {
                let what = &section[..section.len() - 1];
                refuse(
                    format!("service `{name}` refers to undefined {what} `{source}`"),
                    Place::Node(item.src),
                    RefusalKind::Config,
                );
            }
        }
    }
}

/// Two mounts at one target (`tmpfs:` and `volumes:`): `target ... already
/// mounted`.
fn duplicate_mounts(
    service: &Service,
    model: &Node,
    refuse: &mut impl FnMut(String, Place, RefusalKind),
) {
    // compose-go's `volumeIndexer` refuses a long-form mount without a
    // target when it makes the mounts unique, before the schema.
    for (index, item) in model
        .get("volumes")
        .map(|v| v.items())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        if item.is_mapping() && item.get("target").is_none() {
            refuse(
                format!(
                    "service volume services.{}.volumes.[{index}] is missing a mount target",
                    service.name
                ),
                Place::Node(item.src),
                RefusalKind::Config,
            );
        }
    }
    let mut seen: HashSet<String> = HashSet::new();
    let tmpfs: Vec<&std::sync::Arc<Node>> = match model.get("tmpfs") {
        Some(t) if matches!(t.kind, Kind::Sequence(_)) => t.items().iter().collect(),
        Some(t) if !t.is_null() => vec![t],
        _ => Vec::new(),
    };
    let targets = tmpfs
        .into_iter()
        .filter_map(|item| {
            let text = item.str()?;
            Some((text.split(':').next().unwrap_or(text).to_string(), item.src))
        })
        .chain(
            model
                .get("volumes")
                .map(|v| v.items())
                .unwrap_or_default()
                .iter()
                .filter_map(|item| {
                    let target = match &item.kind {
                        Kind::Mapping(_) => item.get("target")?.str()?.to_string(),
                        _ => super::merge::mount_target(item.str()?, false),
                    };
                    Some((target, item.src))
                }),
        );
    for (target, at) in targets {
        if !seen.insert(target.clone()) {
            refuse(
                format!(
                    "service `{}` mounts two things at `{target}` (Compose refuses it: target {target} already mounted)",
                    service.name
                ),
                Place::Node(at),
                RefusalKind::Config,
            );
        }
    }
}

/// Device reservations the schema or compose-go's `DeviceCount` refuse.
fn device_requests(service: &Service, refuse: &mut impl FnMut(String, Place, RefusalKind)) {
    let name = &service.name;
    for request in &service.device_requests {
        if let Some(count) = &request.count {
            let text = count.value.trim();
            if !text.eq_ignore_ascii_case("all")
                && text.parse::<i64>().is_err()
                && !text.contains('$')
            {
                refuse(
                    format!(
                        "device count {text:?} of service `{name}` is neither a number nor `all` (Compose refuses it)"
                    ),
                    Place::Node(count.node),
                    RefusalKind::Config,
                );
            }
        }
        if !request.from_gpus_field && request.capabilities.is_none() {
            refuse(
                format!(
                    "a device reservation of service `{name}` has no `capabilities`, which Compose requires"
                ),
                Place::Node(request.node),
                RefusalKind::ConfigReportedBy(RuleCode::GPU002),
            );
        }
    }
    // `deploy.resources` admits no other keys in compose-spec.json
    // (`additionalProperties: false`): a Kubernetes resource name there
    // makes Compose refuse the file.
    for resource in &service.misplaced_gpu_resources {
        refuse(
            format!(
                "`{}` under `deploy.resources` of service `{name}` is not a Compose resource (Compose refuses it)",
                resource.value
            ),
            Place::Node(resource.node),
            RefusalKind::ConfigReportedBy(RuleCode::GPU011),
        );
    }
}

/// A size Compose cannot read refuses the whole project, whatever the
/// service's IPC mode (`ipc: host` ignores the size only once it is read);
/// a negative one, the engine refuses at `create`. SHM003 reports both.
fn unreadable_sizes(service: &Service, refuse: &mut impl FnMut(String, Place, RefusalKind)) {
    if let Some(size) = &service.shm_size {
        let why = match &size.value {
            SizeValue::Invalid { reason, .. } => Some(format!(
                "`shm_size` of service `{}` is not a valid size: {reason}",
                service.name
            )),
            SizeValue::Negative(n) => Some(format!(
                "`shm_size: {n}` of service `{}` is negative (the engine refuses it)",
                service.name
            )),
            _ => None,
        };
        if let Some(why) = why {
            refuse(
                why,
                Place::Node(size.node),
                RefusalKind::ConfigReportedBy(RuleCode::SHM003),
            );
        }
    }
}

/// A size that only the shell's variables decide: with the variable
/// unset, Compose reads an empty size and refuses it.
fn shell_dependent_sizes(service: &Service, refuse: &mut impl FnMut(String, Place, RefusalKind)) {
    if let Some(size) = &service.shm_size
        && let SizeValue::Unknown { variable } = &size.value
    {
        refuse(
            format!(
                "`shm_size` of service `{}` is empty unless the shell that runs Compose sets `{variable}` (the project's .env does not, and it has no default), and Compose refuses an empty size",
                service.name
            ),
            Place::Node(size.node),
            RefusalKind::UnlessShellSets,
        );
    }
}

/// `depends_on`, and the dependency `ipc: service:X` adds, on a service
/// the project does not define, or only in a profile that is not enabled.
fn dependencies(
    project: &Project,
    services: Option<&std::sync::Arc<Node>>,
    found: &mut Vec<Refusal>,
) {
    null_pids(project, services, found);
    for service in project.services.iter().filter(|s| project.is_active(s)) {
        let model = services.and_then(|s| s.get(&service.name));
        let mut wanted = wanted_services(service, model);
        // One dependency per service named, as compose-go's map keeps it:
        // the first place that names it is where it is reported.
        let mut named = HashSet::new();
        wanted.retain(|(other, _, _)| named.insert(other.clone()));
        for (other, at, required) in wanted {
            let (message, kind) = match project.service(&other) {
                None => (
                    format!(
                        "service `{}` depends on undefined service `{other}` (Compose refuses it)",
                        service.name
                    ),
                    RefusalKind::Config,
                ),
                Some(target) if !project.is_active(target) && required => (
                    format!(
                        "service `{}` depends on `{other}`, which runs only with profile{} {}: `docker compose up` refuses it unless one is enabled",
                        service.name,
                        if target.profiles.len() == 1 { "" } else { "s" },
                        target
                            .profiles
                            .iter()
                            .map(|p| format!("`{p}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    RefusalKind::UnlessShellSets,
                ),
                Some(_) => continue,
            };
            found.push(Refusal {
                message,
                at,
                kind,
                service: Some(service.name.clone()),
            });
        }
    }
}

/// The schema lets `pid: null` by, and compose-go's normalisation then
/// reads it as a string: Compose stops with a Go panic, whatever profile
/// the service is in.
fn null_pids(project: &Project, services: Option<&std::sync::Arc<Node>>, found: &mut Vec<Refusal>) {
    for service in &project.services {
        if let Some(pid) = services
            .and_then(|s| s.get(&service.name))
            .and_then(|m| m.get("pid"))
            .filter(|pid| pid.is_null())
        {
            found.push(Refusal {
                message: format!(
                    "`pid:` of service `{}` is empty, and Compose stops with a crash on it (`panic: interface conversion: interface {{}} is nil, not string`): remove the key (the container then gets its own PID namespace)",
                    service.name
                ),
                at: Place::Node(pid.src),
                kind: RefusalKind::Config,
                service: Some(service.name.clone()),
            });
        }
    }
}

/// The services `service` depends on, each with where it is named and
/// whether the dependency is required: `depends_on`, `ipc: service:X`,
/// and those compose-go's normalisation adds.
fn wanted_services(
    service: &Service,
    model: Option<&std::sync::Arc<Node>>,
) -> Vec<(String, Place, bool)> {
    let mut wanted: Vec<(String, Place, bool)> = Vec::new();
    if let Some(depends) = model.and_then(|m| m.get("depends_on")) {
        match &depends.kind {
            Kind::Sequence(items) => {
                for item in items {
                    if let Some(n) = item.str() {
                        wanted.push((n.to_string(), Place::Node(item.src), true));
                    }
                }
            }
            Kind::Mapping(entries) => {
                for e in entries {
                    let required = e
                        .value
                        .get("required")
                        .and_then(|r| r.str())
                        .is_none_or(|r| r != "false");
                    wanted.push((e.key.clone(), Place::Node(e.key_src), required));
                }
            }
            Kind::Scalar { .. } => {}
        }
    }
    if let Some(ipc) = &service.ipc
        && let IpcMode::Service(donor) = &ipc.value
    {
        wanted.push((donor.clone(), Place::Node(ipc.node), true));
    }
    // compose-go's normalisation adds a required dependency for each
    // link (`db` or `db:alias`), each service a volume is taken from
    // (`volumes_from: [data:ro]`, not `container:x`), and each
    // namespace joined by `service:x`.
    let items = |key: &str| model.and_then(|m| m.get(key)).map(|v| v.items().to_vec());
    for item in items("links").unwrap_or_default() {
        if let Some(link) = item.str() {
            let parts: Vec<&str> = link.split(':').collect();
            let other = if parts.len() == 2 { parts[0] } else { link };
            wanted.push((other.to_string(), Place::Node(item.src), true));
        }
    }
    for item in items("volumes_from").unwrap_or_default() {
        if let Some(from) = item.str()
            && !from.starts_with("container:")
        {
            let other = from.split(':').next().unwrap_or(from);
            wanted.push((other.to_string(), Place::Node(item.src), true));
        }
    }
    for key in ["network_mode", "pid", "uts", "cgroup"] {
        if let Some(node) = model.and_then(|m| m.get(key))
            && let Some(other) = node.str().and_then(|v| v.strip_prefix("service:"))
        {
            wanted.push((other.to_string(), Place::Node(node.src), true));
        }
    }
    wanted
}

/// A project of one file that is not one Compose discovers by name.
fn is_lone_fragment(project: &Project) -> bool {
    project.spec.how == super::Discovery::Alone
        && project.spec.files.iter().all(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_none_or(|n| !super::discover::DEFAULT_FILES.contains(&n))
        })
}

//! Predicates and wording shared by several rules.

use crate::fix::{Applicability, Edit, Fix};
use crate::model::compose::Origin;
use crate::model::compose::{DeviceRequest, EnvVar, Service, Ulimit};
use crate::model::shm_need::{ShmNeed, shm_need};
use crate::model::workload::EnvView;
use crate::rules::{ComposeContext, RuleSettings};
use crate::syntax::yaml::Value;
use crate::syntax::yaml_edit::NewNode;

/// The failures a too-small `/dev/shm` causes, as users see them.
pub const SHM_FAILURES: &str = "NCCL fails with `NCCL WARN Error: failed to extend /dev/shm/nccl-...` \
(`unhandled system error`) and PyTorch DataLoader workers die with `Bus error` or \
`No space left on device` once they outgrow /dev/shm";

/// Why gpulint treats the service as a GPU workload, for labels.
pub fn gpu_reason(service: &Service) -> String {
    let described = service.gpu.describe();
    if !described.is_empty() {
        return described;
    }
    if let Some(resource) = service.misplaced_gpu_resources.first() {
        return format!("asks for `{}` under deploy.resources", resource.value);
    }
    if let Some(built) = service.gpu_build() {
        return format!("builds on the GPU image `{}`", built.base.image);
    }
    "uses GPUs".to_string()
}

/// How much /dev/shm the service's workload needs ([`shm_need`]).
pub fn service_shm_need(cx: &ComposeContext, service: &Service) -> ShmNeed {
    shm_need(cx.container(service), &cx.settings.shm_policy())
}

pub fn add_shm_help(settings: &RuleSettings) -> String {
    format!(
        "set `shm_size: \"{}\"` on the service (or `ipc: host`, which also shares the host's IPC namespace)",
        settings.fix_shm_size
    )
}

/// Where a device request sits under its service:
/// `deploy.resources.reservations.devices.N` or `gpus.N`.
pub fn device_request_site(
    cx: &ComposeContext,
    service: &Service,
    request: &DeviceRequest,
) -> Option<Vec<String>> {
    let parent: &[&str] = if request.from_gpus_field {
        &["gpus"]
    } else {
        &["deploy", "resources", "reservations", "devices"]
    };
    let list = cx.edit.locate(service.map, parent)?;
    let index = cx
        .yaml()
        .items(list.node)
        .iter()
        .position(|&item| cx.yaml().resolve(item) == cx.yaml().resolve(request.node))?;
    let mut site: Vec<String> = parent.iter().map(|s| s.to_string()).collect();
    site.push(index.to_string());
    Some(site)
}

/// The variables only the service's own `env_file:` sets (its
/// `environment:` and other definitions' do not), as rules read them: the
/// setting's range is the `env_file` entry that names the file, and the
/// `Origin` is its line there, for a related span. A finding about one has
/// no fix: the line is in the env file, which gpulint does not edit.
pub fn env_file_vars<'s>(
    cx: &ComposeContext,
    service: &'s Service,
) -> Vec<(EnvView<'s>, &'s Origin)> {
    service
        .inherited
        .env_file_entries
        .iter()
        .filter_map(|(name, &entry)| {
            let (value, origin) = service.inherited.environment.get(name)?;
            let view = EnvView {
                name,
                value: value.as_deref(),
                range: cx.range(entry),
            };
            Some((view, origin))
        })
        .collect()
}

/// The related span of a finding about an `env_file` variable: the line of
/// the env file that sets it, and why no fix is offered.
pub fn env_file_line(origin: &Origin) -> String {
    format!(
        "{} sets it: remove it there (no fix is offered: gpulint edits the compose file, not the env file)",
        origin.what
    )
}

/// A fix that removes an environment variable (the whole `environment` key
/// when it is the only one).
pub fn remove_env_fix(cx: &ComposeContext, service: &Service, var: &EnvVar) -> Option<Fix> {
    let env = cx.edit.locate(service.map, &["environment"])?;
    let edit = match cx.yaml().value(env.node) {
        Value::Sequence(_) => cx.edit.remove_item(env.node, var.node),
        Value::Mapping(_) => cx.edit.remove_entry(env.node, var.node),
        _ => return None,
    };
    let title = format!("Remove `{}`", var.name);
    match edit {
        Ok(edit) => cx.edit_fix(
            service,
            &["environment"],
            vec![edit],
            &[&["environment"]],
            title,
            Applicability::Unsafe,
        ),
        Err(_) => {
            let key = cx
                .yaml()
                .get(cx.service_map(service), "environment")
                .filter(|e| !e.merged)?
                .key;
            let edit = cx.edit.remove_entry(cx.service_map(service), key).ok()?;
            cx.edit_fix(
                service,
                &[],
                vec![edit],
                &[&["environment"]],
                title,
                Applicability::Unsafe,
            )
        }
    }
}

/// Edits that set a ulimit to `value`: the scalar itself, or both `soft` and
/// `hard` of the long form.
pub fn set_ulimit_edits(cx: &ComposeContext, limit: &Ulimit, value: &str) -> Option<Vec<Edit>> {
    let node = cx.yaml().resolve(limit.value_node);
    match cx.yaml().value(node) {
        Value::Scalar { .. } => Some(vec![cx.edit.replace(node, value)]),
        Value::Mapping(_) => {
            let mut edits = Vec::new();
            for key in ["soft", "hard"] {
                let entry = cx.yaml().get(node, key)?;
                edits.push(cx.edit.replace(cx.yaml().resolve(entry.value), value));
            }
            Some(edits)
        }
        _ => None,
    }
}

/// `[{driver: nvidia, count: all, capabilities: [gpu]}]`, the device
/// reservation Docker's GPU guide writes.
pub fn nvidia_reservation() -> NewNode {
    NewNode::Seq(vec![NewNode::map([
        ("driver", NewNode::scalar("nvidia")),
        ("count", NewNode::scalar("all")),
        ("capabilities", NewNode::scalar("[gpu]")),
    ])])
}

/// A fix that rewrites the service's `shm_size` value (`node`) to `size`,
/// keeping the value's quoting: "`verb` `shm_size` to ...".
pub fn set_shm_size_fix(
    cx: &ComposeContext,
    service: &Service,
    node: crate::syntax::yaml::NodeId,
    size: &str,
    verb: &str,
    applicability: Applicability,
) -> Option<Fix> {
    cx.edit_fix(
        service,
        &["shm_size"],
        vec![cx.edit.replace(node, cx.edit.scalar_like(node, size))],
        &[&["shm_size"]],
        format!("{verb} `shm_size` to \"{size}\""),
        applicability,
    )
}

//! Predicates and wording shared by several rules.

use crate::fix::{Applicability, Edit, Fix};
use crate::model::compose::{ComposeEnv, DeviceRequest, Service, Src, Ulimit};
use crate::model::shm_need::{ShmNeed, shm_need};
use crate::syntax::yaml::Value;
use crate::syntax::yaml_edit::NewNode;
use crate::{ComposeContext, RuleSettings};

/// The failures a too-small `/dev/shm` causes, as users see them.
pub(crate) const SHM_FAILURES: &str = "NCCL fails with `NCCL WARN Error: failed to extend /dev/shm/nccl-...` \
(`unhandled system error`) and PyTorch DataLoader workers die with `Bus error` or \
`No space left on device` once they outgrow /dev/shm";

/// What a /dev/shm finding says when the config shows nothing that puts
/// much in /dev/shm (`ContainerRuntime::shm_evidence`): it only informs.
pub(crate) const NO_SHM_EVIDENCE: &str = "nothing in its config shows processes sharing memory \
(no launcher or ranks, no DataLoader workers, no NCCL across several GPUs, no serving engine that asks \
for it): this matters only if what runs there does, and gpulint reports it as information";

/// A /dev/shm finding's note: what fails, and the evidence that it will
/// here (`ContainerRuntime::shm_evidence`), or that the config shows none.
pub(crate) fn shm_note(evidence: Option<&str>) -> String {
    match evidence {
        Some(evidence) => format!("{SHM_FAILURES}, and shared memory is in use here: {evidence}"),
        None => format!("{SHM_FAILURES}; but {NO_SHM_EVIDENCE}"),
    }
}

/// Why gpulint treats the service as a GPU workload, for labels.
pub(crate) fn gpu_reason(service: &Service) -> String {
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
pub(crate) fn service_shm_need(cx: &ComposeContext, service: &Service) -> ShmNeed {
    shm_need(cx.container(service), &cx.settings.shm_policy())
}

pub(crate) fn add_shm_help(settings: &RuleSettings) -> String {
    format!(
        "set `shm_size: \"{}\"` on the service (or `ipc: host`, which also shares the host's IPC namespace)",
        settings.fix_shm_size
    )
}

/// Where a device request sits under the service's definition in the file
/// that writes it: `deploy.resources.reservations.devices.N` or `gpus.N`.
pub(crate) fn device_request_site(
    cx: &ComposeContext,
    service: &Service,
    request: &DeviceRequest,
) -> Option<Vec<String>> {
    let parent: &[&str] = if request.from_gpus_field {
        &["gpus"]
    } else {
        &["deploy", "resources", "reservations", "devices"]
    };
    let file = request.node.file;
    let definition = cx.definition_in(service, file)?;
    let yaml = cx.yaml(file);
    let list = cx.editor(file).locate(definition.map.node, parent)?;
    let index = yaml
        .items(list.node)
        .iter()
        .position(|&item| yaml.resolve(item) == yaml.resolve(request.node.node))?;
    let mut site: Vec<String> = parent.iter().map(|s| s.to_string()).collect();
    site.push(index.to_string());
    Some(site)
}

/// Places a finding about a compose variable: at its `environment` entry,
/// with a fix that removes it; or, for a variable an `env_file` sets, at
/// the `env_file` entry with the line that sets it as a related span and no
/// fix (the line is in the env file, which gpulint does not edit).
pub(crate) fn compose_env_finding<'r>(
    cx: &ComposeContext,
    service: &Service,
    var: &ComposeEnv,
    finding: crate::DiagnosticBuilder<'r>,
) -> crate::DiagnosticBuilder<'r> {
    let at = cx.env_range(var);
    let finding = finding.at(at);
    match var.from_file {
        Some((file, range)) => {
            let source = cx.source_file(file);
            let shown = source
                .path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            finding.related(
                crate::diagnostic::At {
                    range,
                    file: Some(source.clone()),
                },
                format!(
                    "`{}` in {shown} sets it: remove it there (no fix is offered: gpulint edits the compose file, not the env file)",
                    var.name
                ),
            )
        }
        None => finding.fix(remove_env_fix(cx, service, var)),
    }
}

/// A fix that removes an environment variable (the whole `environment` key
/// when it is the only one), in the file that sets it.
pub fn remove_env_fix(cx: &ComposeContext, service: &Service, var: &ComposeEnv) -> Option<Fix> {
    if var.from_file.is_some() {
        return None;
    }
    let file = var.at.file;
    let definition = cx.definition_in(service, file)?;
    let editor = cx.editor(file);
    let yaml = cx.yaml(file);
    let env = editor.locate(definition.map.node, &["environment"])?;
    // A `KEY: value` entry is removed by its key, a `- KEY=value` item by itself.
    let edit = match yaml.value(env.node) {
        Value::Sequence(_) => editor.remove_item(env.node, var.at.node),
        Value::Mapping(_) => editor.remove_entry(env.node, var.key.unwrap_or(var.at).node),
        _ => return None,
    };
    let title = format!("Remove `{}`", var.name);
    match edit {
        Ok(edit) => cx.edit_fix(
            service,
            var.at,
            &["environment"],
            vec![edit],
            &[&["environment"]],
            title,
            Applicability::Unsafe,
        ),
        Err(_) => {
            let map = yaml.resolve(definition.map.node);
            let key = yaml.get(map, "environment").filter(|e| !e.merged)?.key;
            let edit = editor.remove_entry(map, key).ok()?;
            cx.edit_fix(
                service,
                var.at,
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
pub(crate) fn set_ulimit_edits(
    cx: &ComposeContext,
    limit: &Ulimit,
    value: &str,
) -> Option<Vec<Edit>> {
    let file = limit.value_node.file;
    let yaml = cx.yaml(file);
    let editor = cx.editor(file);
    let node = yaml.resolve(limit.value_node.node);
    match yaml.value(node) {
        Value::Scalar { .. } => Some(vec![editor.replace(node, value)]),
        Value::Mapping(_) => {
            let mut edits = Vec::new();
            for key in ["soft", "hard"] {
                let entry = yaml.get(node, key)?;
                edits.push(editor.replace(yaml.resolve(entry.value), value));
            }
            Some(edits)
        }
        _ => None,
    }
}

/// `[{driver: nvidia, count: all, capabilities: [gpu]}]`, the device
/// reservation Docker's GPU guide writes.
pub(crate) fn nvidia_reservation() -> NewNode {
    NewNode::Seq(vec![NewNode::map([
        ("driver", NewNode::scalar("nvidia")),
        ("count", NewNode::scalar("all")),
        ("capabilities", NewNode::scalar("[gpu]")),
    ])])
}

/// A fix that rewrites the service's `shm_size` value (`node`) to `size`,
/// keeping the value's quoting: "`verb` `shm_size` to ...".
pub(crate) fn set_shm_size_fix(
    cx: &ComposeContext,
    service: &Service,
    node: Src,
    size: &str,
    verb: &str,
    applicability: Applicability,
) -> Option<Fix> {
    let editor = cx.editor(node.file);
    cx.edit_fix(
        service,
        node,
        &["shm_size"],
        vec![editor.replace(node.node, editor.scalar_like(node.node, size))],
        &[&["shm_size"]],
        format!("{verb} `shm_size` to \"{size}\""),
        applicability,
    )
}

//! SHM002: `/dev/shm` sized below what GPU jobs need: a compose `shm_size`
//! or tmpfs size, or the `sizeLimit` of a Kubernetes `/dev/shm` emptyDir.

use crate::fix::Applicability;
use crate::fix::Fix;
use crate::model::compose::{Service, ShmMount};
use crate::model::container::{ShmKind, ShmSetting};
use crate::model::k8s::VolumeSource;
use crate::model::quantity::{QuantityValue, bytes_to_quantity};
use crate::model::script::RunSite;
use crate::model::shm_need::{ShmNeed, shm_need};
use crate::model::size::{
    HumanBytes, MIB, SizeValue, parse_compose_size, tmpfs_size_spelling, with_tmpfs_size,
};
use crate::rules::DiagnosticBuilder;
use crate::rules::helpers::{SHM_FAILURES, gpu_reason, service_shm_need, set_shm_size_fix};
use crate::rules::{Check, ComposeContext, KubeContext, Reporter, ScriptContext};

pub const CHECK: Check = Check::both(compose, kubernetes).and_commands(commands);

/// The finding, when `bytes` is below what the workload needs.
fn report<'r>(
    out: &'r mut Reporter,
    range: impl Into<crate::diagnostic::At>,
    bytes: u64,
    need: &ShmNeed,
    subject: &str,
    suggested: &str,
) -> Option<DiagnosticBuilder<'r>> {
    if bytes >= need.bytes {
        return None;
    }
    let key = match need.key {
        Some(key) => format!(" (`{key}` in gpulint.toml's [shm] changes the threshold)"),
        None => String::new(),
    };
    Some(
        out.report(
            range,
            format!(
                "/dev/shm of {} is below the {} that {subject} needs: {}",
                HumanBytes(bytes),
                HumanBytes(need.bytes),
                need.reason,
            ),
        )
        .note(SHM_FAILURES)
        .help(format!("raise it to at least {suggested}{key}")),
    )
}

fn compose(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        if !service.is_gpu_workload() {
            continue;
        }
        // A size this service writes: `shm_size`, or a tmpfs at /dev/shm.
        let shm = &cx.container(service).shm;
        let (ShmKind::Sized, Some(bytes), ShmSetting::Size | ShmSetting::Mount, Some(at)) =
            (shm.kind, shm.bytes, shm.decided_by, cx.decided_at(shm))
        else {
            continue;
        };
        // A bare number under a mebibyte is a unit mistake: SHM003 reports it.
        let bare = matches!(
            service.shm_size.as_ref().map(|s| &s.value),
            Some(SizeValue::Bytes {
                bare_number: true,
                ..
            })
        );
        if bare && bytes < MIB {
            continue;
        }
        let subject = format!("service `{}`", service.name);
        let need = service_shm_need(cx, service);
        let size = need.size();
        let Some(finding) = report(
            out,
            at.clone(),
            bytes,
            &need,
            &subject,
            &format!("\"{size}\""),
        ) else {
            continue;
        };
        // A plain `shm_size` or tmpfs size is rewritten; an interpolated
        // one (its default) is left to the user.
        let fix = service
            .shm_size
            .as_ref()
            .filter(|s| cx.range(s.node) == at && !cx.source(s.node).contains('$'))
            .and_then(|s| {
                set_shm_size_fix(cx, service, s.node, &size, "Raise", Applicability::Unsafe)
            })
            .or_else(|| tmpfs_size_fix(cx, service, at, &size));
        finding
            .label(format!("the service {}", gpu_reason(service)))
            .gpu_evidence(cx, service)
            .fix(fix);
    }
}

/// Raises the size of the /dev/shm tmpfs written at `at` to `size` (the
/// fix size): the `size=` option of a `tmpfs:` entry, or `tmpfs.size` of a
/// long-form volume. Written in the spelling the kernel's tmpfs reads for
/// the option (`size=8g`: the engine hands it to mount(2), which refuses
/// `8gb`).
fn tmpfs_size_fix(
    cx: &ComposeContext,
    service: &Service,
    at: crate::diagnostic::At,
    size: &str,
) -> Option<Fix> {
    let SizeValue::Bytes { bytes, .. } = parse_compose_size(size) else {
        return None;
    };
    let size = tmpfs_size_spelling(bytes);
    let mount = service
        .shm_mounts
        .iter()
        .find(|m| matches!(m.value, ShmMount::Tmpfs(Some(_))) && cx.range(m.node) == at)?;
    if cx.source(mount.node).contains('$') {
        return None;
    }
    let title = format!("Raise the /dev/shm tmpfs to {size}");
    let yaml = cx.yaml(mount.node.file);
    let editor = cx.editor(mount.node.file);
    if let Some(text) = yaml.str(mount.node.node) {
        let raised = with_tmpfs_size(text, &size)?;
        let edit = editor.replace(
            mount.node.node,
            editor.scalar_like(mount.node.node, &raised),
        );
        cx.edit_fix(
            service,
            mount.node,
            &["tmpfs"],
            vec![edit],
            &[&["tmpfs"]],
            title,
            Applicability::Unsafe,
        )
    } else {
        let entry = yaml.get_path(mount.node.node, &["tmpfs", "size"])?;
        let edit = editor.replace(entry.value, editor.scalar_like(entry.value, &size));
        cx.edit_fix(
            service,
            mount.node,
            &["volumes"],
            vec![edit],
            &[&["volumes"]],
            title,
            Applicability::Unsafe,
        )
    }
}

fn kubernetes(cx: &KubeContext, out: &mut Reporter) {
    for pod in cx.pods() {
        for (index, volume) in pod.spec.volumes.iter().enumerate() {
            let VolumeSource::EmptyDir {
                memory: true,
                size_limit: Some((_, value, QuantityValue::Parsed(quantity))),
                ..
            } = &volume.source
            else {
                continue;
            };
            // `512m` (milli) is K8S008's finding.
            if quantity.suffix.is_milli() {
                continue;
            }
            // GPU containers of the model: a KServe runtime's container
            // gets its GPUs from the InferenceService merged into it.
            let users: Vec<_> = pod
                .spec
                .shm_mounters(volume)
                .filter(|c| cx.container(c).is_some_and(|m| m.gpu_workload))
                .collect();
            // The volume serves every container that mounts it: the
            // largest need decides.
            let policy = cx.settings.shm_policy();
            let Some((first, need)) = users
                .iter()
                .filter_map(|c| Some((*c, shm_need(cx.container(c)?, &policy))))
                .max_by_key(|(_, need)| need.bytes)
            else {
                continue;
            };
            let size = bytes_to_quantity(need.bytes);
            let subject = pod.describe_container(first);
            let Some(finding) = report(
                out,
                cx.range(*value),
                quantity.bytes_ceil(),
                &need,
                &subject,
                &format!("`{size}`"),
            ) else {
                continue;
            };
            let path = pod.volume_path(index).child("emptyDir").child("sizeLimit");
            let fix = cx.fix(
                format!("Raise `sizeLimit` to {size}"),
                Applicability::Unsafe,
                [Some(cx.replace(*value, path, &size))],
            );
            finding
                .label("the emptyDir's `sizeLimit` caps /dev/shm")
                .fix(fix);
        }
    }
}

fn commands(cx: &ScriptContext, out: &mut Reporter) {
    for site in &cx.script.runs {
        let run = &site.run;
        if run.gpu_request().is_none() {
            continue;
        }
        let decided = &cx.container(site).shm;
        let (ShmKind::Sized, Some(bytes)) = (decided.kind, decided.bytes) else {
            continue;
        };
        let need = shm_need(cx.container(site), &cx.settings.shm_policy());
        let size = &need.size();
        let subject = format!("the container started by `{}`", run.invocation());
        match decided.decided_by {
            ShmSetting::Size => shm_size_option(cx, site, bytes, &need, size, &subject, out),
            ShmSetting::Mount => tmpfs_option(cx, site, bytes, &need, size, &subject, out),
            _ => {}
        }
    }
}

/// `--shm-size` below the need: raised to the fix size.
fn shm_size_option(
    cx: &ScriptContext,
    site: &RunSite,
    bytes: u64,
    need: &ShmNeed,
    size: &str,
    subject: &str,
    out: &mut Reporter,
) {
    let Some((_, shm)) = site.run.option("--shm-size") else {
        return;
    };
    // A bare number under a mebibyte is a unit mistake: SHM003 reports it.
    let written = parse_compose_size(shm.value.as_deref().unwrap_or(""));
    if matches!(
        written,
        SizeValue::Bytes {
            bare_number: true,
            ..
        }
    ) && bytes < MIB
    {
        return;
    }
    if shm.value_range.is_none() {
        return;
    }
    let Some(finding) = report(out, shm.range, bytes, need, subject, &format!("`{size}`")) else {
        return;
    };
    let fix = cx.set_option_value(
        site,
        shm,
        size,
        format!("Raise `--shm-size` to {size}"),
        Applicability::Unsafe,
    );
    finding.label("`--shm-size` caps /dev/shm").fix(fix);
}

/// A tmpfs at /dev/shm (`--tmpfs /dev/shm:size=1g`, `--mount
/// type=tmpfs,...,tmpfs-size=...`) below the need. A `--tmpfs` size is
/// raised in the spelling the kernel reads (`size=8g`, not `8gb`); a
/// `--mount` one in the fix size's own spelling, since the Docker CLI reads
/// `tmpfs-size` with go-units, as it reads `--shm-size`.
fn tmpfs_option(
    cx: &ScriptContext,
    site: &RunSite,
    bytes: u64,
    need: &ShmNeed,
    size: &str,
    subject: &str,
    out: &mut Reporter,
) {
    let Some(mount) = site.run.dev_shm_mount() else {
        return;
    };
    let SizeValue::Bytes { bytes: raised, .. } = parse_compose_size(size) else {
        return;
    };
    let raised = tmpfs_size_spelling(raised);
    let suggested = match mount.name.as_str() {
        "--tmpfs" => format!("`size={raised}`"),
        _ => format!("`tmpfs-size={size}`"),
    };
    let Some(finding) = report(out, mount.range, bytes, need, subject, &suggested) else {
        return;
    };
    let fix = mount.value.as_deref().and_then(|value| {
        let (new_value, title) = match mount.name.as_str() {
            "--tmpfs" => (with_tmpfs_size(value, &raised)?, raised.as_str()),
            _ => (with_mount_tmpfs_size(value, size)?, size),
        };
        cx.set_option_value(
            site,
            mount,
            &new_value,
            format!("Raise the /dev/shm tmpfs to {title}"),
            Applicability::Unsafe,
        )
    });
    finding
        .label(format!("`{}` caps /dev/shm", mount.name))
        .fix(fix);
}

/// A `--mount` value with its `tmpfs-size=` set to `size`; `None` without one.
fn with_mount_tmpfs_size(value: &str, size: &str) -> Option<String> {
    let mut found = false;
    let parts: Vec<String> = value
        .split(',')
        .map(|part| match part.strip_prefix("tmpfs-size=") {
            Some(_) => {
                found = true;
                format!("tmpfs-size={size}")
            }
            None => part.to_string(),
        })
        .collect();
    found.then(|| parts.join(","))
}

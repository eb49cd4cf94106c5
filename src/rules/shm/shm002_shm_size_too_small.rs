//! SHM002: `/dev/shm` sized below what GPU jobs need: a compose `shm_size`
//! or tmpfs size, or the `sizeLimit` of a Kubernetes `/dev/shm` emptyDir.

use crate::fix::Applicability;
use crate::model::container::{ShmKind, ShmSetting};
use crate::model::k8s::VolumeSource;
use crate::model::quantity::{QuantityValue, bytes_to_quantity};
use crate::model::shm_need::{ShmNeed, shm_need};
use crate::model::size::{HumanBytes, MIB};
use crate::rules::DiagnosticBuilder;
use crate::rules::helpers::SHM_FAILURES;
use crate::rules::{Check, ContainerSite, KubeContext, Reporter};

pub const CHECK: Check = Check::containers(container).and_kubernetes(kubernetes);

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

/// A size the container's own settings write (`shm_size`, `--shm-size`,
/// a tmpfs at /dev/shm) below what its workload needs.
fn container(site: &ContainerSite, out: &mut Reporter) {
    let model = site.model;
    if !model.gpu_workload {
        return;
    }
    let shm = &model.shm;
    let (ShmKind::Sized, Some(bytes), ShmSetting::Size | ShmSetting::Mount) =
        (shm.kind, shm.bytes, shm.decided_by)
    else {
        return;
    };
    // A bare number under a mebibyte is a unit mistake: SHM003 reports it.
    if shm.decided_by == ShmSetting::Size && site.shm_size_is_bare_bytes() && bytes < MIB {
        return;
    }
    let need = shm_need(model, &site.settings().shm_policy());
    if bytes >= need.bytes {
        return;
    }
    let Some(setting) = site.sized_shm(&need.size()) else {
        return;
    };
    let Some(finding) = report(
        out,
        setting.at,
        bytes,
        &need,
        &site.describe(),
        &setting.suggested,
    ) else {
        return;
    };
    site.gpu_evidence(finding.label(setting.label))
        .fix(setting.raise);
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

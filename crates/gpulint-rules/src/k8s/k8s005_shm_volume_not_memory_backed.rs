//! K8S005: an emptyDir mounted at `/dev/shm` that lives on the node's disk.

use crate::fix::Applicability;
use crate::model::k8s::VolumeSource;
use crate::syntax::yaml_edit::NewNode;
use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "shm-volume-not-memory-backed",
    severity: Warning,
    fix: Unsafe,
    summary: "emptyDir mounted at /dev/shm without `medium: Memory`",
    sources: [
        "Kubernetes API reference, EmptyDirVolumeSource: medium \"\" uses the node's default storage, \"Memory\" a tmpfs",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

fn check(cx: &KubeContext, out: &mut Reporter) {
    for pod in cx.pods() {
        for (index, volume) in pod.spec.volumes.iter().enumerate() {
            let VolumeSource::EmptyDir {
                memory: false,
                node,
                key,
                ..
            } = volume.source
            else {
                continue;
            };
            if pod.spec.shm_mounters(volume).next().is_none() {
                continue;
            }
            let fix = cx.fix(
                "Add `medium: Memory`",
                Applicability::Unsafe,
                [cx.insert(
                    volume.node,
                    &pod.volume_path(index),
                    &["emptyDir", "medium"],
                    NewNode::scalar("Memory"),
                )],
            );
            out.report(
                cx.entry_range(key, node),
                format!("the /dev/shm volume `{}` of {} is on the node's disk, not in memory", volume.name.as_deref().unwrap_or(""), pod.describe()),
            )
            .label("an emptyDir without `medium: Memory`")
            .note("an emptyDir without `medium: Memory` is a directory on the node's disk: shared-memory segments there are slower, and their size counts against the pod's ephemeral storage, whose limit evicts the pod")
            .help("add `medium: Memory` (and a `sizeLimit`); the tmpfs then counts toward the container's memory limit")
            .fix(fix);
        }
    }
}

//! K8S006: a memory-backed `/dev/shm` emptyDir without a `sizeLimit` (opt-in).

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::model::k8s::VolumeSource;
use crate::syntax::yaml_edit::NewNode;
use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "shm-volume-without-size-limit",
    severity: Warning,
    fix: Unsafe,
    opt_in: true,
    summary: "memory-backed /dev/shm emptyDir without a `sizeLimit` (opt-in)",
    sources: [
        "Kubernetes API reference, EmptyDirVolumeSource.sizeLimit: a memory medium is limited by the minimum of sizeLimit and the pod's memory limits",
        "Kubernetes docs, volumes: memory-backed emptyDir without a size limit counts toward container memory and may use all node memory",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

fn check(cx: &KubeContext, out: &mut Reporter) {
    for pod in cx.pods() {
        for (index, volume) in pod.spec.volumes.iter().enumerate() {
            let VolumeSource::EmptyDir {
                memory: true,
                size_limit: None,
                node,
                key,
            } = volume.source
            else {
                continue;
            };
            let users: Vec<_> = pod.spec.shm_mounters(volume).collect();
            if users.is_empty() {
                continue;
            }
            let bounded = users.iter().all(|c| c.memory_limit().is_some());
            let size = cx.settings.fix_shm_quantity();
            let fix = cx.fix(
                format!("Add `sizeLimit: {size}`"),
                Applicability::Unsafe,
                [cx.insert(
                    volume.node,
                    &pod.volume_path(index),
                    &["emptyDir", "sizeLimit"],
                    NewNode::scalar(size.as_str()),
                )],
            );
            out.report(
                cx.entry_range(key, node),
                format!("the /dev/shm volume `{}` of {} has no `sizeLimit`", volume.name.as_deref().unwrap_or(""), pod.describe()),
            )
            .severity(if bounded { Severity::Info } else { Severity::Warning })
            .label(if bounded {
                "bounded only by the containers' memory limits"
            } else {
                "unbounded: a container without a memory limit can fill the node's memory"
            })
            .note("a memory-backed emptyDir holds at most the smaller of its `sizeLimit` and the sum of the pod's memory limits; with neither, shared memory can take all of the node's memory and get other pods OOM-killed")
            .help(format!("add `sizeLimit: {size}` (`[shm] fix-size` in gpulint.toml), below the container's memory limit"))
            .fix(fix);
        }
    }
}

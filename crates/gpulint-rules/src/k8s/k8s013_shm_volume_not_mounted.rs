//! K8S013: the pod defines a memory-backed emptyDir for `/dev/shm`, but a
//! GPU container does not mount it.

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::helpers::SHM_FAILURES;
use crate::kube_context::{container_path, shm_mount};
use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "shm-volume-not-mounted",
    severity: Warning,
    fix: Safe,
    summary: "GPU container that does not mount the pod's /dev/shm emptyDir",
    sources: [
        "Kubernetes docs, volumes: a volume is available to the containers that mount it",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

fn check(cx: &KubeContext, out: &mut Reporter) {
    for pod in cx.pods() {
        for container in cx.gpu_containers_on_default_shm(&pod) {
            let Some((_, volume)) = pod.spec.unmounted_shm_volume(container) else {
                continue;
            };
            let name = volume.name.as_deref().expect("named volumes only");
            let fix = cx.fix(
                format!("Mount `{name}` at /dev/shm"),
                Applicability::Safe,
                [cx.append(
                    container.map,
                    &container_path(container),
                    &["volumeMounts"],
                    shm_mount(name),
                )],
            );
            let at = cx
                .yaml()
                .get(container.map, "name")
                .map_or(cx.range(container.map), |e| cx.range(e.value));
            out.report(at, format!("GPU {} does not mount the pod's /dev/shm volume `{name}`", pod.describe_container(container)))
                .severity(if cx.container(container).is_some_and(|c| c.shares_shm_between_ranks()) { Severity::Error } else { Severity::Warning })
                .label("this container still has the default 64 MiB /dev/shm")
                .related(cx.range(volume.node), "a memory-backed emptyDir, meant for /dev/shm")
                .note(format!("{SHM_FAILURES}; a volume only reaches the containers that list it in `volumeMounts`"))
                .help(format!("add `{{name: {name}, mountPath: /dev/shm}}` to this container's `volumeMounts`"))
                .fix(fix);
        }
    }
}

//! K8S009: `hostIPC: true` on a GPU pod.

use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "host-ipc-on-gpu-pod",
    severity: Warning,
    fix: None,
    summary: "`hostIPC: true` on a GPU pod: the host's /dev/shm at a security cost",
    sources: [
        "containerd CRI: with host IPC the sandbox's /dev/shm is the host's",
        "Kubernetes Pod Security Standards, baseline: host namespaces must be disallowed",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

fn check(cx: &KubeContext, out: &mut Reporter) {
    for pod in cx.pods() {
        let Some(key) = pod.spec.host_ipc else {
            continue;
        };
        if !pod.spec.app_containers().any(|c| c.gpu().is_some()) {
            continue;
        }
        let value = cx
            .yaml()
            .get(pod.spec.map, "hostIPC")
            .map_or(key, |e| e.value);
        out.report(cx.entry_range(key, value), format!("GPU pod of {} shares the host's IPC namespace", pod.describe()))
            .label("gives the pod the host's /dev/shm, and its IPC objects")
            .note("`hostIPC` solves the 64 MiB /dev/shm problem at a security cost: the pod can read and write every other process's shared memory and System V IPC on the node, and Pod Security's `baseline` profile forbids it")
            .help("prefer a memory-backed emptyDir at /dev/shm; keep `hostIPC` only on trusted single-tenant nodes, with a suppression comment that says so");
    }
}

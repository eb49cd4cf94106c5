//! K8S004: a GPU container left on the runtime's 64 MiB `/dev/shm`.

use crate::diagnostic::Severity;
use crate::fix::{Applicability, Fix};
use crate::helpers::shm_note;
use crate::kube_context::{Pod, container_path, shm_mount};
use crate::model::k8s::Container;
use crate::syntax::yaml_edit::NewNode;
use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "gpu-pod-without-shm-volume",
    severity: Warning,
    fix: Safe,
    summary: "GPU container left on the container runtime's 64 MiB /dev/shm",
    sources: [
        "kserve/kserve `pkg/controller/v1beta1/inferenceservice/utils/utils.go` (`MergeServingRuntimeAndInferenceServiceSpecs`, `MergePodSpec`) and `pkg/apis/serving/v1beta1/predictor_model.go` (`GetSupportingRuntimes`)",
        "kserve/kserve `config/runtimes` (built-in ClusterServingRuntimes; `/dev/shm` in kserve-huggingfaceserver since #3910, v0.14)",
        "ray-project/kuberay `ray-operator/controllers/ray/common/pod.go` (`addEmptyDir` of `/dev/shm`)",
        "kubernetes/kubernetes#28272: no pod shm-size field; the memory-backed emptyDir workaround",
        "containerd CRI: 64 MiB default /dev/shm, replaced by a mount at /dev/shm; host /dev/shm with hostIPC",
        "NCCL troubleshooting: Docker needs `--shm-size=1g`",
        "PyTorch README, Docker section: the default shared memory segment is not enough",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

/// GPU containers with the default `/dev/shm` and no shm volume to mount
/// (K8S013 reports those that have one).
fn unprovided<'a>(cx: &KubeContext<'a>, pod: &Pod<'a>) -> Vec<&'a Container> {
    cx.gpu_containers_on_default_shm(pod)
        .into_iter()
        .filter(|c| pod.spec.unmounted_shm_volume(c).is_none())
        .collect()
}

fn check(cx: &KubeContext, out: &mut Reporter) {
    for pod in cx.pods() {
        let containers = unprovided(cx, &pod);
        if containers.is_empty() {
            continue;
        }
        let fix = add_shm_volume_fix(cx, &pod, &containers);
        for container in containers {
            let model = cx.container(container);
            let large = model.is_some_and(|c| c.shares_shm_between_ranks());
            // GPUs alone are no evidence of shared memory: without it the
            // finding only informs.
            let evidence = model.and_then(|c| c.shm_evidence());
            // A Kubeflow training runtime is a template that each TrainJob
            // completes (`runtimePatches` add volumes, a /dev/shm among
            // them): without a workload that needs it, what the pod gets
            // is the TrainJob's to say, not the template's.
            let template = matches!(
                pod.object.kind.as_str(),
                "TrainingRuntime" | "ClusterTrainingRuntime"
            );
            if template && evidence.is_none() {
                continue;
            }
            // A KServe runtime's container gets its GPUs from the
            // InferenceService merged into it.
            let request = container
                .gpu()
                .map(|gpu| cx.entry_range(gpu.resource.key, gpu.resource.value));
            let predictor = request
                .is_none()
                .then(|| cx.gpu_predictor(&pod, container))
                .flatten();
            let name = cx
                .yaml()
                .get(container.map, "name")
                .map(|e| cx.range(e.value));
            let Some(at) = name.or(request) else {
                continue;
            };
            let finding = out
                .report(
                    at,
                    format!(
                        "GPU {} runs with the default 64 MiB /dev/shm",
                        pod.describe_container(container)
                    ),
                )
                .severity(match &evidence {
                    None => Severity::Info,
                    Some(_) if large => Severity::Error,
                    Some(_) => Severity::Warning,
                })
                .label("mounts nothing at /dev/shm, and the pod does not set `hostIPC`");
            let mut note = format!(
                "{}; Kubernetes has no shm-size field, so pods get the container runtime's 64 MiB unless a memory-backed emptyDir is mounted at /dev/shm",
                shm_note(evidence.as_deref())
            );
            let finding = match (request, &predictor) {
                (Some(request), _) if name.is_some() => finding.related(request, "the GPU request"),
                (None, Some((service, Some(limit)))) => finding.related(
                    *limit,
                    format!("the GPU limit of {service}, which KServe merges into this runtime"),
                ),
                // No span to point at: the note says where the GPUs come from.
                (None, Some((service, None))) => {
                    note = format!(
                        "{service} gives this runtime's container its GPUs: KServe merges the two into one pod. {note}"
                    );
                    finding
                }
                _ => finding,
            };
            finding
                .note(note)
                .help(format!(
                    "add a volume `{{name: dshm, emptyDir: {{medium: Memory, sizeLimit: {}}}}}` to the pod and mount it at /dev/shm in this container",
                    cx.settings.fix_shm_quantity()
                ))
                .fix(fix.clone());
        }
    }
}

/// One volume for the pod, mounted at `/dev/shm` in every container that needs it.
fn add_shm_volume_fix(cx: &KubeContext, pod: &Pod, containers: &[&Container]) -> Option<Fix> {
    let name = pod.spec.unused_volume_name("dshm");
    let size = cx.settings.fix_shm_quantity();
    // Mounts first: when a container ends the pod spec, its mount and the
    // pod's new `volumes` key are inserted at the same offset, in this order.
    let mut changes: Vec<_> = containers
        .iter()
        .map(|c| {
            cx.append(
                c.map,
                &container_path(c),
                &["volumeMounts"],
                shm_mount(&name),
            )
        })
        .collect();
    let volume = NewNode::map([
        ("name", NewNode::scalar(name.as_str())),
        (
            "emptyDir",
            NewNode::map([
                ("medium", NewNode::scalar("Memory")),
                ("sizeLimit", NewNode::scalar(size.as_str())),
            ]),
        ),
    ]);
    changes.push(cx.append(pod.spec.map, &pod.path(), &["volumes"], volume));
    cx.fix(
        format!("Mount a memory-backed emptyDir `{name}` (sizeLimit {size}) at /dev/shm"),
        Applicability::Safe,
        changes,
    )
}

//! K8S002: GPU requests that differ from the limits, which the API server rejects.

use crate::fix::Applicability;
use crate::kube_context::container_path;
use crate::model::k8s::is_gpu_resource;
use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "gpu-request-limit-mismatch",
    severity: Error,
    fix: Unsafe,
    summary: "GPU request different from the GPU limit, which the API server rejects",
    sources: [
        "Kubernetes, Schedule GPUs: you can specify GPU limits without requests, or both, but they must be equal",
        "kubernetes `pkg/apis/core/validation`: \"must be equal to nvidia.com/gpu limit\"",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

fn check(cx: &KubeContext, out: &mut Reporter) {
    for (pod, container) in cx.containers() {
        for request in container
            .requests
            .iter()
            .filter(|r| is_gpu_resource(&r.name))
        {
            let Some(limit) = container.limits.iter().find(|l| l.name == request.name) else {
                continue;
            };
            // Placeholders and invalid values are not compared (K8S003 reports the latter).
            let (Some(requested), Some(limited)) =
                (request.quantity.quantity(), limit.quantity.quantity())
            else {
                continue;
            };
            if requested.nanos == limited.nanos {
                continue;
            }
            let value = cx.source(request.value);
            // The request follows the limit: a limit alone is also the
            // request, and the limit is the count the container model (and
            // GPU004) reads, so the fix never lowers what the rules see.
            let limit_value = cx.source(limit.value);
            let path = container_path(container)
                .child(container.resources_field)
                .child("requests")
                .child(request.name.as_str());
            let fix = cx.fix(
                format!(
                    "Set the request `{}` to the limit, {limit_value}",
                    request.name
                ),
                Applicability::Unsafe,
                [Some(cx.replace(
                    request.value,
                    path,
                    cx.yaml().str(limit.value).unwrap_or(limit_value),
                ))],
            );
            out.report(
                cx.entry_range(request.key, request.value),
                format!(
                    "{} requests {} `{}` but limits it to {}",
                    pod.describe_container(container),
                    value,
                    request.name,
                    cx.source(limit.value)
                ),
            )
            .label("GPU requests must equal the limit")
            .related(cx.entry_range(limit.key, limit.value), "the limit")
            .note(format!("the API server refuses the pod: \"must be equal to {} limit\"; GPUs cannot be overcommitted", request.name))
            .help("set both to the number of GPUs the container needs, or drop the request (the limit is then used as the request)")
            .fix(fix);
        }
    }
}

//! K8S001: a GPU in `resources.requests` with no matching limit, which the
//! API server rejects.

use crate::fix::Applicability;
use crate::kube_context::container_path;
use crate::model::k8s::is_gpu_resource;
use crate::model::quantity::QuantityValue;
use crate::syntax::yaml_edit::NewNode;
use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "gpu-request-without-limit",
    severity: Error,
    fix: Safe,
    summary: "GPU in `resources.requests` without a limit, which the API server rejects",
    sources: [
        "Kubernetes, Schedule GPUs: GPUs are only supposed to be specified in the limits section",
        "kubernetes `pkg/apis/core/validation`: \"Limit must be set for non overcommitable resources\"",
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
            if container.limits.iter().any(|l| l.name == request.name) {
                continue;
            }
            let value = cx.source(request.value);
            // A request K8S003 rejects (`0.5`, `dshm`) is not copied: the
            // limit would be as wrong as the request.
            let copyable = match &request.quantity {
                QuantityValue::Parsed(q) => q.nanos >= 0 && q.whole().is_some(),
                QuantityValue::Placeholder(_) => true,
                QuantityValue::Invalid(_) => false,
            };
            let fix = copyable
                .then(|| {
                    cx.fix(
                        format!("Add the limit `{}: {value}`", request.name),
                        Applicability::Safe,
                        [cx.insert(
                            container.map,
                            &container_path(container),
                            &[container.resources_field, "limits", &request.name],
                            NewNode::scalar(value),
                        )],
                    )
                })
                .flatten();
            out.report(
                cx.entry_range(request.key, request.value),
                format!("{} requests `{}` without a limit", pod.describe_container(container), request.name),
            )
            .label("GPUs are set in `limits`; a request alone is rejected")
            .note("the API server refuses the pod: \"Limit must be set for non overcommitable resources\"; GPUs cannot be overcommitted, so Kubernetes takes the limit as the request")
            .help(format!("set `{}.limits.{}` to the same value (the request may then be dropped)", container.resources_field, request.name))
            .fix(fix);
        }
    }
}

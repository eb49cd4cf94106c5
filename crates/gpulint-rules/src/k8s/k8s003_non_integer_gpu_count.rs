//! K8S003: a GPU quantity that is not a whole number (`0.5`, `500m`, `1.5`)
//! or not a quantity at all.

use crate::model::k8s::is_gpu_resource;
use crate::model::quantity::QuantityValue;
use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "non-integer-gpu-count",
    severity: Error,
    fix: None,
    summary: "GPU quantity that is not a whole number (`0.5`, `500m`) or not a quantity",
    sources: [
        "kubernetes `pkg/apis/core/validation`: extended resources \"must be an integer\"",
        "NVIDIA k8s-device-plugin: time-slicing, MPS and MIG for sharing GPUs",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

fn check(cx: &KubeContext, out: &mut Reporter) {
    for (pod, container) in cx.containers() {
        let resources = container.requests.iter().chain(&container.limits);
        for resource in resources.filter(|r| is_gpu_resource(&r.name)) {
            let problem = match &resource.quantity {
                QuantityValue::Parsed(q) if q.nanos < 0 => "is negative".to_string(),
                QuantityValue::Parsed(q) if q.whole().is_none() => {
                    "is not a whole number of GPUs".to_string()
                }
                QuantityValue::Invalid(e) => format!("is not a quantity: {e}"),
                _ => continue,
            };
            out.report(
                cx.entry_range(resource.key, resource.value),
                format!(
                    "{} asks for `{}: {}`, which {problem}",
                    pod.describe_container(container),
                    resource.name,
                    cx.source(resource.value)
                ),
            )
            .label("GPUs are allocated whole")
            .note("the API server refuses the pod: extended resources such as GPUs \"must be an integer\"; a fraction does not share a GPU")
            .help("ask for whole GPUs; to share one GPU between pods, use the device plugin's time-slicing or MPS, or a MIG resource such as `nvidia.com/mig-1g.10gb`");
        }
    }
}

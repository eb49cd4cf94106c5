//! K8S008: a memory quantity with the wrong unit: `512m` (milli, so half a
//! byte), or a Docker spelling such as `1g` or `2GB` that Kubernetes rejects.

use crate::fix::{Applicability, Fix, ModelPath};
use crate::kube_context::container_path;
use crate::model::k8s::VolumeSource;
use crate::model::quantity::QuantityValue;
use crate::syntax::yaml::NodeId;
use crate::text::TextRange;
use crate::{Check, KubeContext, Reporter};

crate::declare_rule! {
    name: "quantity-unit-mistake",
    severity: Error,
    fix: Unsafe,
    summary: "memory or sizeLimit with a milli `m` suffix (`512m` is half a byte) or a Docker spelling (`1g`, `2GB`)",
    sources: [
        "Kubernetes, resource units: `m` is milli; memory uses `Ki Mi Gi` or `k M G`",
        "apimachinery `resource.Quantity` grammar",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

/// Resources measured in bytes.
fn is_byte_resource(name: &str) -> bool {
    matches!(name, "memory" | "ephemeral-storage") || name.starts_with("hugepages-")
}

fn check(cx: &KubeContext, out: &mut Reporter) {
    for (pod, container) in cx.containers() {
        for (which, list) in [
            ("requests", &container.requests),
            ("limits", &container.limits),
        ] {
            for resource in list.iter().filter(|r| is_byte_resource(&r.name)) {
                let path = container_path(container)
                    .child(container.resources_field)
                    .child(which)
                    .child(resource.name.as_str());
                let owner = format!(
                    "`{}` of {}",
                    resource.name,
                    pod.describe_container(container)
                );
                report(
                    cx,
                    out,
                    &resource.quantity,
                    resource.value,
                    cx.entry_range(resource.key, resource.value),
                    &owner,
                    path,
                );
            }
        }
    }
    for pod in cx.pods() {
        for (index, volume) in pod.spec.volumes.iter().enumerate() {
            let VolumeSource::EmptyDir {
                size_limit: Some((key, value, ref quantity)),
                ..
            } = volume.source
            else {
                continue;
            };
            let path = pod.volume_path(index).child("emptyDir").child("sizeLimit");
            let owner = format!(
                "the `sizeLimit` of volume `{}` in {}",
                volume.name.as_deref().unwrap_or(""),
                pod.describe()
            );
            report(
                cx,
                out,
                quantity,
                value,
                cx.entry_range(key, value),
                &owner,
                path,
            );
        }
    }
}

fn report(
    cx: &KubeContext,
    out: &mut Reporter,
    quantity: &QuantityValue,
    value: NodeId,
    range: TextRange,
    owner: &str,
    path: ModelPath,
) {
    let written = cx.source(value).trim_matches(['"', '\'']);
    let (message, label, note, corrected) = match quantity {
        // The API server spells a size that is not a whole number of bytes
        // in millis (1.2Gi is `1288490188800m`), and so do tools that
        // compute limits (Kubeflow's notebook limit is 1.2 x the request):
        // a milli quantity of a mebibyte or more means that size, since the
        // slip it would otherwise be (`512m` for `512Mi`) gives a byte or so.
        QuantityValue::Parsed(q) if q.suffix.is_milli() && is_canonical_milli(written) => return,
        QuantityValue::Parsed(q) if q.suffix.is_milli() => (
            format!(
                "{owner} is `{written}`: {} bytes, not mebibytes",
                milli_bytes(written)
            ),
            "`m` means milli (1/1000)".to_string(),
            "Kubernetes reads `m` as milli, as in CPU quantities; for bytes use `Mi` (mebibytes) or `M` (megabytes)",
            Some(format!("{}Mi", written.trim_end_matches('m'))),
        ),
        QuantityValue::Invalid(e) => (
            format!("{owner} is `{written}`, which is not a Kubernetes quantity"),
            e.reason.clone(),
            "the API server refuses the manifest; quantities use `Ki Mi Gi Ti` (powers of 1024) or `k M G T` (powers of 1000)",
            e.suggestion.clone(),
        ),
        _ => return,
    };
    let fix = corrected.as_deref().and_then(|c| -> Option<Fix> {
        cx.fix(
            format!("Write `{c}`"),
            Applicability::Unsafe,
            [Some(cx.replace(value, path, c))],
        )
    });
    out.report(range, message)
        .label(label)
        .note(note)
        .help(match &corrected {
            Some(c) => format!("write `{c}` if that is the size you meant"),
            None => "write the size with a binary suffix such as `512Mi` or `8Gi`".to_string(),
        })
        .fix(fix);
}

/// A milli quantity of at least a mebibyte: the canonical spelling of a
/// fractional byte count, not a unit mistake.
fn is_canonical_milli(written: &str) -> bool {
    let number: f64 = written.trim_end_matches('m').parse().unwrap_or(0.0);
    number / 1000.0 >= 1_048_576.0
}

/// `512m` → `0.512`.
fn milli_bytes(written: &str) -> String {
    let number: f64 = written.trim_end_matches('m').parse().unwrap_or(0.0);
    let bytes = number / 1000.0;
    let text = format!("{bytes:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

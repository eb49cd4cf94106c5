//! K8S014: the Kubernetes API refuses the manifest (an unknown field, a
//! value of the wrong type, a missing required field), as the API's
//! published schema decides it, or for a custom resource the schema of its
//! project's CustomResourceDefinition.

use crate::syntax::tree::{Budget, Builder, Interpolated};
use crate::{Check, KubeContext, Reporter};
use gpulint_schema::kubernetes::{self, KUBERNETES_VERSION, ManifestError, Refusal};

crate::declare_rule! {
    name: "manifest-refused",
    severity: Error,
    fix: None,
    summary: "The Kubernetes API refuses the manifest: an unknown field, a value of the wrong type or a missing required field",
    sources: [
        "kubectl apply --validate=strict (the default since Kubernetes 1.27): unknown fields are an error",
        "the Kubernetes OpenAPI schema, as kubernetes-validate publishes it (local-strict, v1.37.0)",
        "the CustomResourceDefinitions of kubeflow/training-operator v1.9.0, ray-project/kuberay, kubernetes-sigs/jobset, kubernetes-sigs/lws, kserve/kserve and volcano-sh/volcano (commits in scripts/vendor_crd_schemas.py; vendored in crates/gpulint-schema/schemas/crd-GROUP.json)",
    ],
}

pub const CHECK: Check = Check::kubernetes(check);

/// More than this many errors in one object is a file of another kind
/// that looks like a manifest: the first ones say enough.
const MOST_REPORTED: usize = 20;

fn check(cx: &KubeContext, out: &mut Reporter) {
    let yaml = cx.yaml();
    let root = cx.manifest.root;
    let text_of = |key: &str| yaml.get(root, key).and_then(|e| yaml.str(e.value));
    // A `List` (`kubectl get -o yaml` writes one) is not an object the
    // API stores: kubectl applies each of its items as its own object,
    // and the API judges each by its own kind.
    if text_of("kind").is_some_and(|kind| kind.ends_with("List"))
        && let Some(items) = yaml.get(root, "items")
    {
        for &item in yaml.items(items.value) {
            check_object(cx, out, item);
        }
        return;
    }
    check_object(cx, out, root);
}

/// K8S014 on one object of the file, at `root`.
fn check_object(cx: &KubeContext, out: &mut Reporter, root: crate::syntax::yaml::NodeId) {
    let yaml = cx.yaml();
    let text_of = |key: &str| yaml.get(root, key).and_then(|e| yaml.str(e.value));
    let (Some(api_version), Some(kind)) = (text_of("apiVersion"), text_of("kind")) else {
        return;
    };
    // Most manifests are valid, and the quick checker says so on the
    // file's syntax: only the others pay for a tree and boon's errors.
    if !kubernetes::knows(api_version, kind) || kubernetes::accepts(yaml, root, api_version, kind) {
        return;
    }
    // As written: kubectl substitutes nothing.
    let as_written = |text: &str| Interpolated::Text(text.to_string());
    let Ok(tree) = Builder::new(yaml, 0, Budget::default(), &as_written).build(root) else {
        return;
    };
    let name = tree
        .get_path(&["metadata", "name"])
        .and_then(|n| n.str())
        .map_or(String::new(), |n| format!(" \"{n}\""));
    let origin = kubernetes::crd_origin(api_version, kind);
    for error in kubernetes::validate(&tree, api_version, kind)
        .into_iter()
        .filter(|error| reported(error, cx.source(error.at.node)))
        .take(MOST_REPORTED)
    {
        let help = match error.kind {
            Refusal::UnknownField => format!(
                "remove it, or move it to where the API defines it (check its spelling and its level: `kubectl explain {}`)",
                explain_path(kind, &error.path)
            ),
            Refusal::MissingField | Refusal::Value => value_help(&error.message).to_string(),
        };
        out.report(
            cx.range(error.at.node),
            format!("Kubernetes refuses {kind}{name}: {}", error.message),
        )
        .label(match origin {
            Some(_) => "refused by its CustomResourceDefinition's schema",
            None => "refused by the API's schema",
        })
        .note(match origin {
            Some(origin) => format!(
                "the API server checks a custom resource against the schema of its CustomResourceDefinition (as {origin} ships it; strict, kubectl's default `--validate=strict`) and refuses all of it: nothing in it is created or changed"
            ),
            None => format!(
                "`kubectl apply` checks a manifest against the API's schema (Kubernetes {KUBERNETES_VERSION}; strict, kubectl's default `--validate=strict`) and refuses all of it: nothing in it is created or changed"
            ),
        })
        .help(help);
    }
}

fn value_help(message: &str) -> &'static str {
    if message.contains("must be a string,") {
        "quote it: YAML reads a bare `8` or `yes` as a number or a boolean, and the field takes text"
    } else if message.ends_with("not a string") {
        "write it without quotes: the field takes a number or a boolean, not text"
    } else {
        "write the value in the shape the field takes (`kubectl explain` shows it)"
    }
}

/// Whether an error is one the API would refuse the file for as the
/// user applies it (`source` is the text of the node it is at).
///
/// - A missing required field is not: a manifest without one is nearly
///   always a fragment another tool completes (a kustomize patch, a kuttl
///   assert, a template), and kubectl names it at once if not.
/// - A strategic-merge-patch directive (`$patch`, `$setElementOrder/...`,
///   `$retainKeys`) is a patch's own word, not a field.
/// - A value that is a placeholder (`NUM_NODES`, `${REPLICAS}`, `<count>`)
///   is chosen when the file is rendered, which gpulint does not see.
fn reported(error: &ManifestError, source: &str) -> bool {
    match error.kind {
        Refusal::MissingField => false,
        Refusal::UnknownField => !error.path.iter().any(|part| part.starts_with('$')),
        Refusal::Value => !is_placeholder(source),
    }
}

/// A word a script or a renderer replaces before the file is applied.
fn is_placeholder(source: &str) -> bool {
    let text = source.trim().trim_matches(['"', '\'']);
    let upper_word = text.len() >= 2
        && text.starts_with(|c: char| c.is_ascii_uppercase())
        && text
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    let delimited = [
        ("${", "}"),
        ("$(", ")"),
        ("<", ">"),
        ("__", "__"),
        ("@", "@"),
        ("%", "%"),
    ]
    .iter()
    .any(|(open, close)| {
        text.len() > open.len() + close.len() && text.starts_with(open) && text.ends_with(close)
    });
    upper_word || delimited || text.starts_with('$')
}

/// The `kubectl explain` argument for the object that holds the field at
/// `path` (`pod.spec.containers`).
fn explain_path(kind: &str, path: &[String]) -> String {
    let mut out = kind.to_ascii_lowercase();
    for part in &path[..path.len().saturating_sub(1)] {
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            out.push('.');
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::is_placeholder;

    #[test]
    fn placeholders_a_renderer_replaces() {
        for word in [
            "NUM_NODES",
            "REPLICAS",
            "${N}",
            "$N",
            "\"${N}\"",
            "<count>",
            "__N__",
            "@N@",
        ] {
            assert!(is_placeholder(word), "{word}");
        }
        for value in [
            "8001", "\"80\"", "true", "yes", "A", "eight", "[1]", "{}", "{n: 1}", "Eight",
        ] {
            assert!(!is_placeholder(value), "{value}");
        }
    }
}

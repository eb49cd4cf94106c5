//! kustomize's built-in transformers that gpulint applies: `namespace`,
//! `namePrefix`/`nameSuffix`, `replicas` and `images`.

use super::*;

/// Kinds kustomize's namespace transformer leaves alone.
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "ClusterIssuer",
    "ClusterRole",
    "ClusterRoleBinding",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PodSecurityPolicy",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

/// Whether kustomize treats `kind` as cluster-scoped.
pub(super) fn is_cluster_scoped(kind: &str) -> bool {
    CLUSTER_SCOPED.contains(&kind)
}

pub(super) fn set_namespace(namespace: &Arc<Node>, acc: &mut [Resource]) {
    for r in acc.iter_mut() {
        let kind = str_at(&r.node, &["kind"]).unwrap_or_default();
        if !is_cluster_scoped(kind) {
            r.node = with_path(&r.node, &["metadata", "namespace"], namespace.clone());
        }
    }
}

/// `namePrefix` and `nameSuffix`, which kustomize gives every object but
/// these kinds.
pub(super) fn rename(k: &Node, acc: &mut [Resource]) {
    const NOT_RENAMED: &[&str] = &["CustomResourceDefinition", "APIService", "Namespace"];
    let prefix = k
        .get("namePrefix")
        .and_then(|n| n.str())
        .unwrap_or_default();
    let suffix = k
        .get("nameSuffix")
        .and_then(|n| n.str())
        .unwrap_or_default();
    if prefix.is_empty() && suffix.is_empty() {
        return;
    }
    for r in acc.iter_mut() {
        let kind = str_at(&r.node, &["kind"]).unwrap_or_default();
        let Some(name) = r.node.get_path(&["metadata", "name"]).cloned() else {
            continue;
        };
        if NOT_RENAMED.contains(&kind) {
            continue;
        }
        let Some(text) = name.str() else { continue };
        let renamed = format!("{prefix}{text}{suffix}");
        r.names.push(renamed.clone());
        r.node = with_path(&r.node, &["metadata", "name"], scalar(renamed, name.src));
    }
}

/// `replicas`: kustomize scales these kinds, and refuses an entry that
/// names none of them.
pub(super) fn set_replicas(k: &Node, acc: &mut [Resource]) -> Result<(), BuildError> {
    const SCALED: &[&str] = &[
        "Deployment",
        "ReplicaSet",
        "ReplicationController",
        "StatefulSet",
    ];
    for item in field_items(k, "replicas") {
        let (Some(name), Some(count)) = (item.get("name").and_then(|n| n.str()), item.get("count"))
        else {
            continue;
        };
        let mut scaled = false;
        for r in acc.iter_mut().filter(|r| r.named(name)) {
            let kind = str_at(&r.node, &["kind"]).unwrap_or_default();
            if SCALED.contains(&kind) {
                r.node = with_path(&r.node, &["spec", "replicas"], count.clone());
                scaled = true;
            }
        }
        if !scaled {
            return Err(BuildError::new(format!(
                "its `replicas` entry `{name}` names no Deployment, ReplicaSet, ReplicationController or StatefulSet"
            )));
        }
    }
    Ok(())
}

/// `images`: every `image` of a `containers` or `initContainers` list
/// anywhere in an object whose name the entry gives.
pub(super) fn set_images(k: &Node, acc: &mut [Resource]) {
    let images = field_items(k, "images");
    if images.is_empty() {
        return;
    }
    for r in acc.iter_mut() {
        r.node = retag(&r.node, images, false);
    }
}

fn retag(node: &Arc<Node>, images: &[Arc<Node>], in_containers: bool) -> Arc<Node> {
    match &node.kind {
        Kind::Mapping(entries) => {
            let mut changed = false;
            let entries: Vec<Entry> = entries
                .iter()
                .map(|e| {
                    let value = if in_containers && e.key == "image" {
                        new_image(&e.value, images)
                    } else {
                        let containers = matches!(e.key.as_str(), "containers" | "initContainers")
                            && e.value.is_sequence();
                        retag(&e.value, images, containers)
                    };
                    changed |= !Arc::ptr_eq(&value, &e.value);
                    Entry { value, ..e.clone() }
                })
                .collect();
            if changed {
                Arc::new(node.with_kind(Kind::Mapping(entries)))
            } else {
                node.clone()
            }
        }
        Kind::Sequence(items) => {
            let retagged: Vec<Arc<Node>> = items
                .iter()
                .map(|i| {
                    if in_containers && i.is_mapping() {
                        retag_container(i, images)
                    } else {
                        retag(i, images, false)
                    }
                })
                .collect();
            if retagged.iter().zip(items).all(|(a, b)| Arc::ptr_eq(a, b)) {
                node.clone()
            } else {
                Arc::new(node.with_kind(Kind::Sequence(retagged)))
            }
        }
        Kind::Scalar { .. } => node.clone(),
    }
}

fn retag_container(container: &Arc<Node>, images: &[Arc<Node>]) -> Arc<Node> {
    let Some(image) = container.get("image") else {
        return retag(container, images, false);
    };
    let new = new_image(image, images);
    if Arc::ptr_eq(&new, image) {
        container.clone()
    } else {
        with_entry(container, "image", new, None)
    }
}

/// The image an `images` entry makes of `image`, placed at the entry.
fn new_image(image: &Arc<Node>, images: &[Arc<Node>]) -> Arc<Node> {
    let Some(text) = image.str() else {
        return image.clone();
    };
    let (name, tag) = split_image(text);
    for entry in images {
        if entry.get("name").and_then(|n| n.str()) != Some(name) {
            continue;
        }
        let field = |f: &str| {
            entry
                .get(f)
                .and_then(|n| n.str().map(|s| (s.to_string(), n.src)))
        };
        let new_name = field("newName");
        let new_tag = field("newTag");
        let digest = field("digest");
        let src = [&digest, &new_tag, &new_name]
            .into_iter()
            .flatten()
            .map(|(_, src)| *src)
            .next()
            .unwrap_or(entry.src);
        let name = new_name.map(|(n, _)| n).unwrap_or_else(|| name.to_string());
        let tag = match (digest, new_tag) {
            (Some((d, _)), _) => format!("@{d}"),
            (None, Some((t, _))) => format!(":{t}"),
            (None, None) => tag.to_string(),
        };
        return scalar(format!("{name}{tag}"), src);
    }
    image.clone()
}

/// `registry/name:tag@digest` → (`registry/name`, `:tag@digest`).
pub(super) fn split_image(image: &str) -> (&str, &str) {
    let end_of_name = image.find('@').unwrap_or(image.len());
    let name = &image[..end_of_name];
    let tag_start = name
        .rfind(':')
        .filter(|&colon| !name[colon..].contains('/'))
        .unwrap_or(end_of_name);
    (&image[..tag_start], &image[tag_start..])
}

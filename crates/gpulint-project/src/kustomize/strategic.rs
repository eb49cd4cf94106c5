//! Strategic-merge patches as kustomize's kyaml applies them: mappings
//! merge key by key (`null` deletes), lists of objects of the API's own
//! kinds merge element by element by their merge key (`name`,
//! `mountPath`, ...), other lists (every list of a custom resource, whose
//! schema kustomize does not have) and scalars are replaced, and
//! `$patch: delete` / `$patch: replace` directives do what they say.

use super::{Entry, Kind, Node};
use std::sync::Arc;

/// The keys kyaml merges a list of objects by, in its order, when every
/// element has the key (`yaml.AssociativeSequenceKeys`). For the lists
/// that decide containers these are the API's own merge keys:
/// `containers`, `volumes` and `env` by `name`, `volumeMounts` by
/// `mountPath`.
const MERGE_KEYS: &[&str] = &[
    "mountPath",
    "devicePath",
    "ip",
    "type",
    "topologyKey",
    "name",
    "containerPort",
];

/// `$patch` of a mapping.
fn directive(node: &Node) -> Option<&str> {
    node.get("$patch").and_then(|n| n.str())
}

/// Whether kustomize knows the schema of the object's kind, and so merges
/// its lists: the API's own groups (`v1`, `apps/v1`, `*.k8s.io`).
fn merges_lists(object: &Node) -> bool {
    let api_version = object
        .get("apiVersion")
        .and_then(|n| n.str())
        .unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    !group.contains('.') || group.ends_with(".k8s.io")
}

/// An object with a strategic-merge patch applied; `None` when the patch
/// deletes it (`$patch: delete`).
pub(super) fn merge_object(object: &Arc<Node>, patch: &Arc<Node>) -> Option<Arc<Node>> {
    merge(object, patch, merges_lists(object))
}

/// `base` with `patch` merged in; `None` when the patch deletes it.
fn merge(base: &Arc<Node>, patch: &Arc<Node>, lists: bool) -> Option<Arc<Node>> {
    match &patch.kind {
        Kind::Mapping(patch_entries) => {
            match directive(patch) {
                Some("delete") => return None,
                Some("replace") => return strip(patch),
                _ => {}
            }
            if !base.is_mapping() {
                return strip(patch);
            }
            let mut entries: Vec<Entry> = base.entries().to_vec();
            for entry in patch_entries {
                if entry.key.starts_with('$') {
                    continue;
                }
                let at = entries.iter().position(|e| e.key == entry.key);
                if entry.value.is_null() {
                    if let Some(at) = at {
                        entries.remove(at);
                    }
                    continue;
                }
                match at {
                    Some(at) => match merge(&entries[at].value, &entry.value, lists) {
                        Some(value) => entries[at].value = value,
                        None => {
                            entries.remove(at);
                        }
                    },
                    None => {
                        if let Some(value) = strip(&entry.value) {
                            entries.push(Entry {
                                value,
                                ..entry.clone()
                            });
                        }
                    }
                }
            }
            Some(Arc::new(base.with_kind(Kind::Mapping(entries))))
        }
        Kind::Sequence(items) if lists && base.is_sequence() => {
            Some(merge_list(base, items, patch))
        }
        // A custom resource's list is replaced by the patch's, as written
        // (its `null`s too).
        Kind::Sequence(_) if !lists => Some(patch.clone()),
        // The same value: the base still writes it (a merge key, a name).
        Kind::Scalar { raw, .. }
            if base.raw() == Some(raw) && base.is_plain() == patch.is_plain() =>
        {
            Some(base.clone())
        }
        _ => strip(patch),
    }
}

fn merge_list(base: &Arc<Node>, items: &[Arc<Node>], patch: &Arc<Node>) -> Arc<Node> {
    if items.iter().any(|i| directive(i) == Some("replace")) {
        let kept = items
            .iter()
            .filter(|i| directive(i) != Some("replace"))
            .filter_map(strip)
            .collect();
        return Arc::new(patch.with_kind(Kind::Sequence(kept)));
    }
    let Some(key) = merge_key(base.items(), items) else {
        return strip(patch).unwrap_or_else(|| patch.clone());
    };
    // kyaml lists the patch's elements first, each merged with the base's
    // element of its key, then the base's other elements in their order.
    let id = |n: &Node| n.get(key).and_then(|v| v.raw().map(str::to_string));
    let base_items = base.items();
    let mut merged: Vec<Arc<Node>> = Vec::with_capacity(base_items.len() + items.len());
    let mut used = vec![false; base_items.len()];
    for item in items {
        let at = base_items
            .iter()
            .enumerate()
            .position(|(i, b)| !used[i] && id(b) == id(item));
        if let Some(at) = at {
            used[at] = true;
        }
        match (at, directive(item)) {
            (_, Some("delete")) => {}
            (Some(at), _) => merged.extend(merge(&base_items[at], item, true)),
            (None, _) => merged.extend(strip(item)),
        }
    }
    merged.extend(
        base_items
            .iter()
            .zip(&used)
            .filter(|(_, used)| !**used)
            .map(|(b, _)| b.clone()),
    );
    Arc::new(base.with_kind(Kind::Sequence(merged)))
}

/// The key both lists' elements are merged by: the first of
/// [`MERGE_KEYS`] every element of the base has (the patch's when the
/// base is empty), which every element of the patch has too.
fn merge_key(base: &[Arc<Node>], patch: &[Arc<Node>]) -> Option<&'static str> {
    let all_have = |list: &[Arc<Node>], key: &str| {
        list.iter()
            .all(|n| n.is_mapping() && n.get(key).is_some_and(|v| v.raw().is_some()))
    };
    let decided_by = if base.is_empty() { patch } else { base };
    if decided_by.is_empty() {
        return None;
    }
    let key = MERGE_KEYS.iter().find(|k| all_have(decided_by, k))?;
    // Directive-only elements (`{$patch: delete, name: x}`) have the key too.
    all_have(patch, key).then_some(*key)
}

/// A patch's value as it is added where the base has none: directives
/// removed, and `None` for a deletion.
pub(super) fn strip(node: &Arc<Node>) -> Option<Arc<Node>> {
    match &node.kind {
        Kind::Mapping(entries) => {
            if directive(node) == Some("delete") {
                return None;
            }
            if !entries.iter().any(needs_strip_entry) {
                return Some(node.clone());
            }
            // A `null` deletes what is not there: nothing is added.
            let kept = entries
                .iter()
                .filter(|e| !e.key.starts_with('$') && !e.value.is_null())
                .filter_map(|e| strip(&e.value).map(|value| Entry { value, ..e.clone() }))
                .collect();
            Some(Arc::new(node.with_kind(Kind::Mapping(kept))))
        }
        Kind::Sequence(items) => {
            if !items.iter().any(|i| needs_strip(i)) {
                return Some(node.clone());
            }
            let kept = items.iter().filter_map(strip).collect();
            Some(Arc::new(node.with_kind(Kind::Sequence(kept))))
        }
        Kind::Scalar { .. } => Some(node.clone()),
    }
}

fn needs_strip_entry(e: &Entry) -> bool {
    e.key.starts_with('$') || e.value.is_null() || needs_strip(&e.value)
}

fn needs_strip(node: &Node) -> bool {
    match &node.kind {
        Kind::Mapping(entries) => entries.iter().any(needs_strip_entry),
        Kind::Sequence(items) => items.iter().any(|i| needs_strip(i)),
        Kind::Scalar { .. } => false,
    }
}

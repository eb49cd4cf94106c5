//! A kustomization's patches: `patchesStrategicMerge`, `patches` (either
//! kind, with or without a `target`) and `patchesJson6902`, each applied to
//! the objects built so far as kustomize applies it.

use super::*;

impl Build<'_> {
    pub(super) fn strategic_merge_patches(
        &mut self,
        dir: &Path,
        k: &Node,
        acc: &mut Vec<Resource>,
    ) -> Result<(), BuildError> {
        for item in field_items(k, "patchesStrategicMerge") {
            for patch in self.patch_documents(dir, item)? {
                merge_by_name(&patch, acc)?;
            }
        }
        Ok(())
    }

    pub(super) fn patches(
        &mut self,
        dir: &Path,
        k: &Node,
        acc: &mut Vec<Resource>,
    ) -> Result<(), BuildError> {
        for item in field_items(k, "patches") {
            let text = patch_or_path(item, "patches")?;
            let documents = self.patch_documents(dir, text)?;
            let target = item.get("target").map(|t| Selector::of(t)).transpose()?;
            for document in documents {
                match (document.is_sequence(), &target) {
                    (true, Some(target)) => apply_json_patch(&document, target, acc)?,
                    (true, None) => {
                        return Err(BuildError::new(
                            "a JSON 6902 patch has no `target` to apply to",
                        ));
                    }
                    (false, Some(target)) => {
                        // The patch's own name is ignored: the target chose.
                        let mut deleted = Vec::new();
                        for (i, r) in acc
                            .iter_mut()
                            .enumerate()
                            .filter(|(_, r)| target.selects(r))
                        {
                            let patch = keep_name(&document, &r.node);
                            match strategic::merge_object(&r.node, &patch) {
                                Some(node) => r.node = node,
                                None => deleted.push(i),
                            }
                        }
                        remove_all(acc, &deleted);
                    }
                    (false, None) => merge_by_name(&document, acc)?,
                }
            }
        }
        Ok(())
    }

    pub(super) fn json_6902_patches(
        &mut self,
        dir: &Path,
        k: &Node,
        acc: &mut [Resource],
    ) -> Result<(), BuildError> {
        for item in field_items(k, "patchesJson6902") {
            let text = patch_or_path(item, "patchesJson6902")?;
            let target = item
                .get("target")
                .map(|t| Selector::of(t))
                .transpose()?
                .ok_or_else(|| BuildError::new("a `patchesJson6902` entry has no `target`"))?;
            for document in self.patch_documents(dir, text)? {
                apply_json_patch(&document, &target, acc)?;
            }
        }
        Ok(())
    }
}

/// A patch entry's inline `patch`, or else the `path` of its file.
fn patch_or_path<'n>(item: &'n Node, field: &str) -> Result<&'n Arc<Node>, BuildError> {
    item.get("patch")
        .or_else(|| item.get("path"))
        .ok_or_else(|| BuildError::new(format!("a `{field}` entry has neither `path` nor `patch`")))
}

/// Applies a JSON 6902 patch to every object `target` selects.
fn apply_json_patch(
    document: &Arc<Node>,
    target: &Selector,
    acc: &mut [Resource],
) -> Result<(), BuildError> {
    for r in acc.iter_mut().filter(|r| target.selects(r)) {
        r.node = json_patch::apply(&r.node, document).map_err(BuildError::new)?;
    }
    Ok(())
}

/// Applies a strategic-merge patch to the object it names (by kind and
/// name, and namespace where the patch gives one), as kustomize does when
/// a patch has no `target`.
fn merge_by_name(patch: &Arc<Node>, acc: &mut Vec<Resource>) -> Result<(), BuildError> {
    let kind = str_at(patch, &["kind"]).unwrap_or_default();
    let name = str_at(patch, &["metadata", "name"]).unwrap_or_default();
    let namespace = str_at(patch, &["metadata", "namespace"]);
    let mut matched = false;
    let mut deleted = Vec::new();
    for (i, r) in acc.iter_mut().enumerate() {
        let selected = str_at(&r.node, &["kind"]) == Some(kind)
            && r.named(name)
            && namespace.is_none_or(|ns| namespace_of(&r.node) == ns);
        if selected {
            matched = true;
            // The patch keeps the object's name: it was matched by any.
            let patch = keep_name(patch, &r.node);
            match strategic::merge_object(&r.node, &patch) {
                Some(node) => r.node = node,
                None => deleted.push(i),
            }
        }
    }
    remove_all(acc, &deleted);
    if !matched {
        return Err(BuildError::new(format!(
            "a patch names {kind} `{name}`, which the build does not have"
        )));
    }
    Ok(())
}

/// Removes the resources at `indexes` (ascending).
fn remove_all(acc: &mut Vec<Resource>, indexes: &[usize]) {
    for &i in indexes.iter().rev() {
        acc.remove(i);
    }
}

/// The patch without a `metadata.name` that differs from the object's.
fn keep_name(patch: &Arc<Node>, object: &Node) -> Arc<Node> {
    let object_name = str_at(object, &["metadata", "name"]);
    if str_at(patch, &["metadata", "name"]) == object_name {
        return patch.clone();
    }
    let Some(metadata) = patch.get("metadata") else {
        return patch.clone();
    };
    let entries = metadata
        .entries()
        .iter()
        .filter(|e| e.key != "name")
        .cloned()
        .collect();
    with_entry(
        patch,
        "metadata",
        Arc::new(metadata.with_kind(Kind::Mapping(entries))),
        None,
    )
}

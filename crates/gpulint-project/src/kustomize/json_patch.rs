//! JSON 6902 patches (`add`, `remove`, `replace`, `move`, `copy`, `test`)
//! over trees, as kustomize applies them: a path that is not there is an
//! error, and the build stops.

use super::{Entry, Kind, Node, Src, with_entry};
use std::sync::Arc;

/// `object` with each operation of `operations` (a sequence) applied.
pub(super) fn apply(object: &Arc<Node>, operations: &Node) -> Result<Arc<Node>, String> {
    let mut object = object.clone();
    for operation in operations.items() {
        object = apply_one(&object, operation)?;
    }
    Ok(object)
}

fn apply_one(object: &Arc<Node>, operation: &Node) -> Result<Arc<Node>, String> {
    let field = |f: &str| operation.get(f).and_then(|n| n.str());
    let op = field("op").ok_or("a JSON patch operation has no `op`")?;
    let path_node = operation
        .get("path")
        .ok_or_else(|| format!("a JSON patch `{op}` has no `path`"))?;
    let path = pointer(path_node.str().unwrap_or_default())?;
    let value = || {
        operation
            .get("value")
            .cloned()
            .ok_or_else(|| format!("a JSON patch `{op}` has no `value`"))
    };
    let from = || -> Result<Vec<String>, String> {
        pointer(field("from").ok_or_else(|| format!("a JSON patch `{op}` has no `from`"))?)
    };
    let missing = |path: &[String]| {
        format!(
            "a JSON patch `{op}` names /{}, which is not there",
            path.join("/")
        )
    };
    match op {
        "add" => add(object, &path, value()?, path_node.src),
        "replace" => replace(object, &path, value()?, path_node.src).ok_or_else(|| missing(&path)),
        "remove" => remove(object, &path).ok_or_else(|| missing(&path)),
        "move" => {
            let from = from()?;
            let moved = get(object, &from).ok_or_else(|| missing(&from))?;
            let without = remove(object, &from).ok_or_else(|| missing(&from))?;
            add(&without, &path, moved, path_node.src)
        }
        "copy" => {
            let from = from()?;
            let copied = get(object, &from).ok_or_else(|| missing(&from))?;
            add(object, &path, copied, path_node.src)
        }
        // A test that passes changes nothing; gpulint does not compare.
        "test" => Ok(object.clone()),
        other => Err(format!("a JSON patch has an unknown `op: {other}`")),
    }
}

/// A JSON pointer's reference tokens (`/a~1b/0` → `a/b`, `0`).
fn pointer(text: &str) -> Result<Vec<String>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let rest = text
        .strip_prefix('/')
        .ok_or_else(|| format!("a JSON patch path `{text}` does not start with `/`"))?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn index(token: &str, len: usize, append: bool) -> Option<usize> {
    if append && token == "-" {
        return Some(len);
    }
    let i: usize = token.parse().ok()?;
    let bound = if append { len } else { len.saturating_sub(1) };
    (i <= bound && (append || len > 0)).then_some(i)
}

fn get(node: &Arc<Node>, path: &[String]) -> Option<Arc<Node>> {
    let mut node = node.clone();
    for token in path {
        node = match &node.kind {
            Kind::Mapping(_) => node.get(token)?.clone(),
            Kind::Sequence(items) => items.get(index(token, items.len(), false)?)?.clone(),
            Kind::Scalar { .. } => return None,
        };
    }
    Some(node)
}

/// `add`: into a mapping it sets the key, into a list it inserts.
fn add(
    node: &Arc<Node>,
    path: &[String],
    value: Arc<Node>,
    key_src: Src,
) -> Result<Arc<Node>, String> {
    let Some((last, parents)) = path.split_last() else {
        return Ok(value);
    };
    let parent = get(node, parents).ok_or_else(|| {
        format!(
            "a JSON patch adds under /{}, which is not there",
            parents.join("/")
        )
    })?;
    let updated = match &parent.kind {
        Kind::Mapping(_) => with_entry(&parent, last, value, Some(key_src)),
        Kind::Sequence(items) => {
            let at = index(last, items.len(), true).ok_or_else(|| {
                format!(
                    "a JSON patch adds at index {last} of a list of {}",
                    items.len()
                )
            })?;
            let mut items = items.clone();
            items.insert(at, value);
            Arc::new(parent.with_kind(Kind::Sequence(items)))
        }
        Kind::Scalar { .. } => {
            return Err(format!(
                "a JSON patch adds under /{}, which is a scalar",
                parents.join("/")
            ));
        }
    };
    Ok(set(node, parents, updated))
}

/// `replace`: the node at `path` becomes `value`. kustomize's JSON patch
/// sets a key a mapping lacks, but refuses an index a list lacks.
fn replace(node: &Arc<Node>, path: &[String], value: Arc<Node>, key_src: Src) -> Option<Arc<Node>> {
    let Some((last, parents)) = path.split_last() else {
        return Some(value);
    };
    let parent = get(node, parents)?;
    let updated = match &parent.kind {
        Kind::Mapping(_) => with_entry(&parent, last, value, Some(key_src)),
        Kind::Sequence(items) => {
            let at = index(last, items.len(), false)?;
            let mut items = items.clone();
            items[at] = value;
            Arc::new(parent.with_kind(Kind::Sequence(items)))
        }
        Kind::Scalar { .. } => return None,
    };
    Some(set(node, parents, updated))
}

fn remove(node: &Arc<Node>, path: &[String]) -> Option<Arc<Node>> {
    let (last, parents) = path.split_last()?;
    let parent = get(node, parents)?;
    let updated = match &parent.kind {
        Kind::Mapping(entries) => {
            parent.get(last)?;
            let kept: Vec<Entry> = entries.iter().filter(|e| &e.key != last).cloned().collect();
            Arc::new(parent.with_kind(Kind::Mapping(kept)))
        }
        Kind::Sequence(items) => {
            let at = index(last, items.len(), false)?;
            let mut items = items.clone();
            items.remove(at);
            Arc::new(parent.with_kind(Kind::Sequence(items)))
        }
        Kind::Scalar { .. } => return None,
    };
    Some(set(node, parents, updated))
}

/// `node` with the node at `path` (which exists) replaced by `value`.
fn set(node: &Arc<Node>, path: &[String], value: Arc<Node>) -> Arc<Node> {
    let Some((first, rest)) = path.split_first() else {
        return value;
    };
    match &node.kind {
        Kind::Mapping(_) => {
            let child = node.get(first).expect("the path exists");
            with_entry(node, first, set(child, rest, value), None)
        }
        Kind::Sequence(items) => {
            let at = index(first, items.len(), false).expect("the path exists");
            let mut items = items.clone();
            items[at] = set(&items[at], rest, value);
            Arc::new(node.with_kind(Kind::Sequence(items)))
        }
        Kind::Scalar { .. } => node.clone(),
    }
}

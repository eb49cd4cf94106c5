//! `replacements`: a value copied from one object's field into fields of
//! others, as kustomize's replacement transformer copies it. Field paths
//! are kustomize's: `spec.template.spec.containers.[name=main].image`,
//! `metadata.annotations.[cert-manager.io/inject-ca-from]`, an index, `*`.
//! The copied value keeps where its source writes it.

use super::{BuildError, Kind, Node, Resource, Src, str_at, with_entry};
use std::sync::Arc;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    /// `[name=value]`: the list element whose `name` is `value`; with an
    /// empty name, the scalar element that is `value`.
    Select(String, String),
    All,
}

fn parse_path(text: &str) -> Result<Vec<Step>, BuildError> {
    let text = text.strip_prefix('.').unwrap_or(text);
    let mut steps = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').ok_or_else(|| {
                BuildError::new(format!(
                    "a replacement's field path `{text}` has an unclosed `[`"
                ))
            })?;
            let segment = &inner[..end];
            steps.push(match segment.split_once('=') {
                Some((key, value)) => Step::Select(key.to_string(), value.to_string()),
                None => Step::Key(segment.to_string()),
            });
            rest = inner[end + 1..]
                .strip_prefix('.')
                .unwrap_or(&inner[end + 1..]);
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let segment = &rest[..end];
            steps.push(if segment == "*" {
                Step::All
            } else {
                Step::Key(segment.to_string())
            });
            rest = &rest[end..];
            rest = rest.strip_prefix('.').unwrap_or(rest);
        }
    }
    Ok(steps)
}

/// The children of `node` one step selects.
fn children<'n>(node: &'n Arc<Node>, step: &Step) -> Vec<(usize, &'n Arc<Node>)> {
    match (&node.kind, step) {
        (Kind::Mapping(entries), Step::Key(key)) => entries
            .iter()
            .enumerate()
            .filter(|(_, e)| &e.key == key)
            .map(|(i, e)| (i, &e.value))
            .take(1)
            .collect(),
        (Kind::Sequence(items), Step::Key(index)) => index
            .parse::<usize>()
            .ok()
            .and_then(|i| items.get(i).map(|n| (i, n)))
            .into_iter()
            .collect(),
        (Kind::Sequence(items), Step::Select(key, value)) => items
            .iter()
            .enumerate()
            .filter(|(_, item)| {
                if key.is_empty() {
                    item.raw() == Some(value.as_str())
                } else {
                    item.get(key).and_then(|v| v.raw()) == Some(value.as_str())
                }
            })
            .collect(),
        (Kind::Mapping(entries), Step::All) => {
            entries.iter().map(|e| &e.value).enumerate().collect()
        }
        (Kind::Sequence(items), Step::All) => items.iter().enumerate().collect(),
        _ => Vec::new(),
    }
}

fn get<'n>(node: &'n Arc<Node>, path: &[Step]) -> Option<&'n Arc<Node>> {
    let Some((first, rest)) = path.split_first() else {
        return Some(node);
    };
    let (_, child) = children(node, first).into_iter().next()?;
    get(child, rest)
}

/// `node` with every field `path` reaches replaced by what `value` makes
/// of it; `found` counts them. With `create`, missing keys are made.
fn set(
    node: &Arc<Node>,
    path: &[Step],
    value: &dyn Fn(&Arc<Node>) -> Arc<Node>,
    create: Option<Src>,
    found: &mut usize,
) -> Arc<Node> {
    let Some((first, rest)) = path.split_first() else {
        *found += 1;
        return value(node);
    };
    let selected = children(node, first);
    if selected.is_empty() {
        let Some(src) = create else {
            return node.clone();
        };
        let made = |empty: Arc<Node>, found: &mut usize| {
            if rest.is_empty() {
                *found += 1;
                value(&empty)
            } else {
                set(&empty, rest, value, create, found)
            }
        };
        // What kustomize creates: a mapping, a list before a `[k=v]`, and
        // in a list the element `{k: v}` the selector names.
        let empty = |kind: Kind| {
            Arc::new(Node {
                keys: Default::default(),
                kind,
                tag: None,
                src,
                entry_key: None,
            })
        };
        return match (&node.kind, first) {
            (Kind::Mapping(_), Step::Key(key)) => {
                let child = match rest.first() {
                    Some(Step::Select(..)) => empty(Kind::Sequence(Vec::new())),
                    _ => empty(Kind::Mapping(Vec::new())),
                };
                with_entry(node, key, made(child, found), Some(src))
            }
            (Kind::Sequence(items), Step::Select(key, wanted)) if !key.is_empty() => {
                let element = with_entry(
                    &empty(Kind::Mapping(Vec::new())),
                    key,
                    super::scalar(wanted.clone(), src),
                    Some(src),
                );
                let mut items = items.clone();
                items.push(made(element, found));
                Arc::new(node.with_kind(Kind::Sequence(items)))
            }
            _ => node.clone(),
        };
    }
    match &node.kind {
        Kind::Mapping(entries) => {
            let mut entries = entries.clone();
            for (i, child) in selected {
                entries[i].value = set(child, rest, value, create, found);
            }
            Arc::new(node.with_kind(Kind::Mapping(entries)))
        }
        Kind::Sequence(items) => {
            let mut items = items.clone();
            for (i, child) in selected {
                items[i] = set(child, rest, value, create, found);
            }
            Arc::new(node.with_kind(Kind::Sequence(items)))
        }
        Kind::Scalar { .. } => node.clone(),
    }
}

/// A selector of `source`, `select` and `reject`: fields that must equal.
fn matches(selector: &Node, r: &Resource) -> bool {
    let (group, version) = super::group_version(&r.node);
    let field = |f: &str| selector.get(f).and_then(|n| n.str());
    let is = |f: &str, actual: &str| field(f).is_none_or(|want| want == actual);
    is("group", group)
        && is("version", version)
        && is("kind", str_at(&r.node, &["kind"]).unwrap_or_default())
        && field("name").is_none_or(|want| r.named(want))
        && is(
            "namespace",
            str_at(&r.node, &["metadata", "namespace"]).unwrap_or_default(),
        )
}

/// `options.delimiter` and `options.index`.
fn delimited(options: Option<&Arc<Node>>) -> Option<(String, isize)> {
    let options = options?;
    let delimiter = options.get("delimiter").and_then(|n| n.str())?.to_string();
    let index = options
        .get("index")
        .and_then(|n| n.str())
        .and_then(|i| i.parse().ok())
        .unwrap_or(0);
    Some((delimiter, index))
}

/// Applies one replacement (a `source` and its `targets`) to `acc`.
pub(super) fn apply(replacement: &Node, acc: &mut [Resource]) -> Result<(), BuildError> {
    let source = replacement
        .get("source")
        .ok_or_else(|| BuildError::new("a replacement has no `source`"))?;
    let sources: Vec<&Resource> = acc.iter().filter(|r| matches(source, r)).collect();
    let [from] = sources.as_slice() else {
        return Err(BuildError::new(format!(
            "a replacement's source matches {} objects, not one",
            sources.len()
        )));
    };
    let path_text = source
        .get("fieldPath")
        .and_then(|n| n.str())
        .unwrap_or("metadata.name");
    let path = parse_path(path_text)?;
    let found = get(&from.node, &path).cloned().ok_or_else(|| {
        BuildError::new(format!("a replacement's source has no field `{path_text}`"))
    })?;
    let copied = match (delimited(source.get("options")), found.str()) {
        (Some((delimiter, index)), Some(text)) => {
            let parts: Vec<&str> = text.split(delimiter.as_str()).collect();
            let part = usize::try_from(index)
                .ok()
                .and_then(|i| parts.get(i))
                .ok_or_else(|| {
                    BuildError::new(format!(
                        "a replacement's source index {index} is out of range"
                    ))
                })?;
            super::scalar(part.to_string(), found.src)
        }
        _ => found,
    };
    for target in replacement
        .get("targets")
        .map(|t| t.items())
        .unwrap_or_default()
    {
        let select = target.get("select");
        let rejects = target.get("reject").map(|r| r.items()).unwrap_or_default();
        let options = target.get("options");
        let create = options
            .and_then(|o| o.get("create"))
            .and_then(|n| n.raw())
            .is_some_and(|c| c == "true");
        let delimiter = delimited(options);
        let value = |old: &Arc<Node>| -> Arc<Node> {
            let (Some((delimiter, index)), Some(new)) = (&delimiter, copied.str()) else {
                return copied.clone();
            };
            let old_text = old.str().unwrap_or_default();
            let mut parts: Vec<&str> = if old_text.is_empty() {
                Vec::new()
            } else {
                old_text.split(delimiter.as_str()).collect()
            };
            // kustomize puts an index before the parts first, past them last.
            match usize::try_from(*index) {
                Ok(i) if i < parts.len() => parts[i] = new,
                Ok(_) => parts.push(new),
                Err(_) => parts.insert(0, new),
            }
            super::scalar(parts.join(delimiter), copied.src)
        };
        for field_path in target
            .get("fieldPaths")
            .map(|f| f.items())
            .unwrap_or_default()
        {
            let text = field_path
                .str()
                .ok_or_else(|| BuildError::new("a replacement's field path is not text"))?;
            let steps = parse_path(text)?;
            for r in acc.iter_mut() {
                let selected = select.is_none_or(|s| matches(s, r))
                    && !rejects.iter().any(|reject| matches(reject, r));
                if !selected {
                    continue;
                }
                let mut found = 0;
                let node = set(
                    &r.node,
                    &steps,
                    &value,
                    create.then_some(field_path.src),
                    &mut found,
                );
                if found == 0 && !create {
                    return Err(BuildError::new(format!(
                        "a replacement's target has no field `{text}`"
                    )));
                }
                r.node = node;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_read_as_kustomize_writes_them() {
        let key = |k: &str| Step::Key(k.into());
        assert_eq!(
            parse_path(".metadata.annotations.[cert-manager.io/inject-ca-from]").unwrap(),
            [
                key("metadata"),
                key("annotations"),
                key("cert-manager.io/inject-ca-from")
            ]
        );
        assert_eq!(
            parse_path("spec.template.spec.containers.[name=main].image").unwrap(),
            [
                key("spec"),
                key("template"),
                key("spec"),
                key("containers"),
                Step::Select("name".into(), "main".into()),
                key("image")
            ]
        );
        assert_eq!(
            parse_path("spec.dnsNames.[=a.svc].x.*").unwrap(),
            [
                key("spec"),
                key("dnsNames"),
                Step::Select(String::new(), "a.svc".into()),
                key("x"),
                Step::All
            ]
        );
        assert!(parse_path("a.[b").is_err());
    }
}

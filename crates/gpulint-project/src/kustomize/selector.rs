//! A patch's or replacement's `target`: which built objects it selects.

use super::*;

/// A patch's `target`: kustomize's selector, whose names are patterns.
pub(super) struct Selector {
    group: Option<regex::Regex>,
    version: Option<regex::Regex>,
    kind: Option<regex::Regex>,
    name: Option<regex::Regex>,
    namespace: Option<regex::Regex>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

/// One term of a label selector.
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

impl Selector {
    pub(super) fn of(target: &Node) -> Result<Selector, BuildError> {
        let pattern = |field: &str| -> Result<Option<regex::Regex>, BuildError> {
            let Some(text) = target.get(field).and_then(|n| n.str()) else {
                return Ok(None);
            };
            regex::Regex::new(&format!("^(?:{text})$"))
                .map(Some)
                .map_err(|_| {
                    BuildError::new(format!(
                        "a patch target's {field} `{text}` is not a pattern"
                    ))
                })
        };
        let requirements = |field: &str| -> Result<Vec<Requirement>, BuildError> {
            match target.get(field).and_then(|n| n.str()) {
                Some(text) => parse_selector(text),
                None => Ok(Vec::new()),
            }
        };
        Ok(Selector {
            group: pattern("group")?,
            version: pattern("version")?,
            kind: pattern("kind")?,
            name: pattern("name")?,
            namespace: pattern("namespace")?,
            labels: requirements("labelSelector")?,
            annotations: requirements("annotationSelector")?,
        })
    }

    pub(super) fn selects(&self, r: &Resource) -> bool {
        let node = &r.node;
        let (group, version) = group_version(node);
        let is = |pattern: &Option<regex::Regex>, text: &str| {
            pattern.as_ref().is_none_or(|p| p.is_match(text))
        };
        is(&self.group, group)
            && is(&self.version, version)
            && is(&self.kind, str_at(node, &["kind"]).unwrap_or_default())
            && self
                .name
                .as_ref()
                .is_none_or(|p| r.names.iter().any(|n| p.is_match(n)))
            && is(
                &self.namespace,
                str_at(node, &["metadata", "namespace"]).unwrap_or_default(),
            )
            && satisfied(&self.labels, node.get_path(&["metadata", "labels"]))
            && satisfied(
                &self.annotations,
                node.get_path(&["metadata", "annotations"]),
            )
    }
}

fn parse_selector(text: &str) -> Result<Vec<Requirement>, BuildError> {
    let mut requirements = Vec::new();
    for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if term.contains(" in ") || term.contains(" notin ") || term.contains('(') {
            return Err(BuildError::new(format!(
                "a patch target's selector `{text}` uses set terms, which gpulint does not read"
            )));
        }
        let requirement = if let Some((k, v)) = term.split_once("!=") {
            Requirement::NotEquals(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
            Requirement::Equals(k.trim().into(), v.trim().into())
        } else if let Some(k) = term.strip_prefix('!') {
            Requirement::Absent(k.trim().into())
        } else {
            Requirement::Exists(term.into())
        };
        requirements.push(requirement);
    }
    Ok(requirements)
}

fn satisfied(requirements: &[Requirement], map: Option<&Arc<Node>>) -> bool {
    let value = |k: &str| map.and_then(|m| m.get(k)).and_then(|n| n.str());
    requirements.iter().all(|r| match r {
        Requirement::Equals(k, v) => value(k) == Some(v),
        Requirement::NotEquals(k, v) => value(k) != Some(v),
        Requirement::Exists(k) => value(k).is_some(),
        Requirement::Absent(k) => value(k).is_none(),
    })
}

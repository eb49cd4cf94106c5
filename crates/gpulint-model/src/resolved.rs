//! A file's meaning as fix verification compares it: each document's
//! resolved tree (merges applied, aliases followed) as sorted (path, leaf)
//! pairs, and which paths a set of edits changes. Rules use it to tell
//! whether a fix on an anchor reaches more than it declares; the engine to
//! verify every fix before it is kept.

use crate::dockerfile::DockerfileModel;
use crate::fix::{Edit, Fix, ModelPath, PathOverlap, apply_edits};
use crate::script::{Script, ScriptKind};
use crate::syntax::yaml::Yaml;

/// A file expands to at most this many leaves for verification (alias bombs stop here).
pub(crate) const MAX_VERIFIED_LEAVES: usize = 200_000;

/// One document's resolved tree as sorted (path, leaf) pairs.
pub type DocumentLeaves = Vec<(Vec<String>, String)>;

/// A text's documents and their resolved trees.
pub struct Resolved {
    pub documents: usize,
    /// Every document's leaves; `None` when the file is too large to expand.
    pub leaves: Option<Vec<DocumentLeaves>>,
}

impl Resolved {
    /// Each document's resolved leaves, without top-level `x-` extension keys
    /// (Compose ignores them; anchors often live there).
    pub fn of(yaml: &Yaml) -> Self {
        let leaves = yaml
            .documents
            .iter()
            .map(|d| match d.root {
                Some(root) => yaml.leaves(root, MAX_VERIFIED_LEAVES).map(|mut l| {
                    l.retain(|(path, _)| !path.first().is_some_and(|k| k.starts_with("x-")));
                    l.sort();
                    l
                }),
                None => Some(Vec::new()),
            })
            .collect();
        Resolved {
            documents: yaml.documents.len(),
            leaves,
        }
    }

    /// A YAML text's documents; none when it does not parse.
    pub fn of_yaml_text(text: &str) -> Self {
        match Yaml::parse(text) {
            Ok(yaml) => Resolved::of(&yaml),
            Err(_) => Resolved {
                documents: 0,
                leaves: None,
            },
        }
    }

    /// A Dockerfile's meaning is one document: its stages' leaves.
    pub fn of_dockerfile(text: &str) -> Self {
        Resolved {
            documents: 1,
            leaves: Some(vec![DockerfileModel::parse(text).leaves()]),
        }
    }

    /// JSON with comments (a `devcontainer.json`) is one document: its
    /// values by path, comments and layout aside; none when it does not
    /// parse.
    pub fn of_jsonc(text: &str) -> Self {
        match crate::syntax::jsonc::parse(text) {
            Ok(json) => Resolved {
                documents: 1,
                leaves: Some(vec![json.root.leaves()]),
            },
            Err(_) => Resolved {
                documents: 0,
                leaves: None,
            },
        }
    }

    /// A script's meaning is one document: its commands' words.
    pub fn of_script(text: &str, kind: ScriptKind) -> Self {
        Resolved {
            documents: 1,
            leaves: Some(vec![Script::read(text, kind, None).leaves()]),
        }
    }
}

/// What applying `edits` changes in `document` of a YAML text: `Ok` with the
/// changed paths, `Err` with why the result cannot be compared (an alias
/// reads an anchor the edits remove). `None` when the file is too large to
/// expand.
pub fn paths_changed_by(
    text: &str,
    document: usize,
    edits: &[Edit],
) -> Option<Result<Vec<ModelPath>, String>> {
    let old = Resolved::of_yaml_text(text).leaves?;
    let Ok(new) = Yaml::parse(&apply_edits(text, edits)) else {
        return Some(Err("an alias reads the anchor it would remove".into()));
    };
    let new = Resolved::of(&new).leaves?;
    let (old, new) = (old.get(document)?, new.get(document)?);
    Some(Ok(changed_paths(old, new)))
}

/// The first of `changed` (from [`paths_changed_by`]) that `fix` does not
/// declare, as a reason.
pub fn undeclared_among(changed: &Result<Vec<ModelPath>, String>, fix: &Fix) -> Option<String> {
    let changed = match changed {
        Ok(changed) => changed,
        Err(why) => return Some(why.clone()),
    };
    let declared = PathOverlap::new(fix.changes.iter().chain(fix.may_change.iter()));
    changed.iter().find(|c| !declared.overlaps(c)).map(|c| {
        format!("`{c}` reads the same anchored value through an alias and would change too")
    })
}

/// Paths whose leaves differ between two sorted leaf lists.
pub fn changed_paths(
    old: &[(Vec<String>, String)],
    new: &[(Vec<String>, String)],
) -> Vec<ModelPath> {
    let mut changed = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) if a.0 == b.0 => {
                if a.1 != b.1 {
                    changed.push(ModelPath(a.0.clone()));
                }
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.0 < b.0 => {
                changed.push(ModelPath(a.0.clone()));
                i += 1;
            }
            (Some(_), Some(b)) | (None, Some(b)) => {
                changed.push(ModelPath(b.0.clone()));
                j += 1;
            }
            (Some(a), None) => {
                changed.push(ModelPath(a.0.clone()));
                i += 1;
            }
            (None, None) => break,
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(text: &str) -> DocumentLeaves {
        Resolved::of_yaml_text(text).leaves.unwrap().remove(0)
    }

    #[test]
    fn changed_paths_finds_added_removed_and_edited_leaves() {
        let old = leaves("s:\n  a: 1\n  b: 2\n  c: x\n");
        let new = leaves("s:\n  a: 1\n  b: \"2\"\n  d: {e: 1}\n");
        let changed: Vec<String> = changed_paths(&old, &new)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(changed, ["s.b", "s.c", "s.d.e"]);
    }

    #[test]
    fn extension_keys_and_merge_order_do_not_count_as_changes() {
        let old = leaves("x-a: &a {k: 1}\ns:\n  <<: *a\n  j: 2\n");
        let new = leaves("x-a: &a {k: 1, note: y}\ns:\n  j: 2\n  <<: *a\n");
        assert_eq!(
            changed_paths(&old, &new),
            vec![ModelPath::new(["s", "note"])]
        );
    }
}

//! How Compose merges one file over the files before it, and a service
//! over the service it `extends`: compose-go v2.9.1's `override/merge.go`
//! (the merge rule of each path), `override/uncity.go` (sequences whose
//! items are unique by a key, the later item replacing the earlier in
//! place) and `loader/reset.go` (`!reset` and `!override`).
//!
//! Every rule is a small function over [`Node`]s; a merged node keeps the
//! [`Src`] of the value that decided it, so a
//! finding about a merged value points at the file that wrote it.

use crate::syntax::tree::{Entry, Interpolated, KeyIndex, Kind, Node, Src};
use crate::syntax::yaml::Style;
use foldhash::{HashMap, HashMapExt};
use std::sync::Arc;

mod unicity;
pub(crate) use unicity::*;

/// A value's place in the model, as compose-go's `tree.Path` (keys only;
/// sequence items as their index).
pub type Path<'a> = [&'a str];

/// Why two files cannot be merged, and at which value of the later one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    pub message: String,
    pub node: Arc<Node>,
}

/// Whether `path` matches `pattern` (`*` matches any one key).
fn matches(path: &Path, pattern: &[&str]) -> bool {
    path.len() == pattern.len() && path.iter().zip(pattern).all(|(p, q)| *q == "*" || p == q)
}

/// The merge rules compose-go applies instead of the default one, by path.
#[derive(Clone, Copy)]
enum Rule {
    /// The later value replaces the earlier (`command`, `entrypoint`).
    Override,
    /// Both as sequences, appended (`environment`, `tmpfs`, `env_file`).
    ToSequence,
    /// Mappings merged, a sequence or string read as a mapping of names.
    ToMapping,
    /// `depends_on`: a list of names as a mapping of each to
    /// `{condition: service_started, required: true}`.
    ToDependencies,
    /// `build:` as a mapping (a string is its context).
    Build,
    /// `extra_hosts`: appended, leaving out what is already there.
    ExtraHosts,
    /// `logging`: merged when both name the same driver, else replaced.
    Logging,
    /// `ulimits.<name>`: the later value replaces the earlier.
    Ulimit,
}

const RULES: &[(&[&str], Rule)] = &[
    (&["networks", "*", "labels"], Rule::ToSequence),
    (&["volumes", "*", "labels"], Rule::ToSequence),
    (&["services", "*", "annotations"], Rule::ToSequence),
    (&["services", "*", "build"], Rule::Build),
    (&["services", "*", "build", "args"], Rule::ToSequence),
    (
        &["services", "*", "build", "additional_contexts"],
        Rule::ToSequence,
    ),
    (&["services", "*", "build", "extra_hosts"], Rule::ExtraHosts),
    (&["services", "*", "build", "labels"], Rule::ToSequence),
    (&["services", "*", "command"], Rule::Override),
    (&["services", "*", "depends_on"], Rule::ToDependencies),
    (&["services", "*", "deploy", "labels"], Rule::ToSequence),
    (&["services", "*", "dns"], Rule::ToSequence),
    (&["services", "*", "dns_opt"], Rule::ToSequence),
    (&["services", "*", "dns_search"], Rule::ToSequence),
    (&["services", "*", "entrypoint"], Rule::Override),
    (&["services", "*", "env_file"], Rule::ToSequence),
    (&["services", "*", "label_file"], Rule::ToSequence),
    (&["services", "*", "environment"], Rule::ToSequence),
    (&["services", "*", "extra_hosts"], Rule::ExtraHosts),
    (&["services", "*", "healthcheck", "test"], Rule::Override),
    (&["services", "*", "labels"], Rule::ToSequence),
    (
        &["services", "*", "volumes", "*", "volume", "labels"],
        Rule::ToSequence,
    ),
    (&["services", "*", "logging"], Rule::Logging),
    (&["services", "*", "models"], Rule::ToMapping),
    (&["services", "*", "networks"], Rule::ToMapping),
    (&["services", "*", "sysctls"], Rule::ToSequence),
    (&["services", "*", "tmpfs"], Rule::ToSequence),
    (&["services", "*", "ulimits", "*"], Rule::Ulimit),
];

fn rule(path: &Path) -> Option<Rule> {
    RULES
        .iter()
        .find(|(pattern, _)| matches(path, pattern))
        .map(|(_, rule)| *rule)
}

/// `later` merged over `earlier` at `path` (compose-go's `MergeYaml`).
pub fn merge(
    earlier: &Arc<Node>,
    later: &Arc<Node>,
    path: &mut Vec<String>,
) -> Result<Arc<Node>, MergeError> {
    let borrowed: Vec<&str> = path.iter().map(String::as_str).collect();
    if let Some(rule) = rule(&borrowed) {
        return Ok(match rule {
            Rule::Override | Rule::Ulimit => later.clone(),
            Rule::ToSequence => {
                let mut items = to_sequence(earlier);
                items.extend(to_sequence(later));
                Arc::new(later.with_kind(Kind::Sequence(items)))
            }
            Rule::ExtraHosts => {
                let mut items = to_sequence(earlier);
                let seen: Vec<String> = items.iter().filter_map(|i| scalar_key(i)).collect();
                items.extend(
                    to_sequence(later)
                        .into_iter()
                        .filter(|i| scalar_key(i).is_none_or(|k| !seen.contains(&k))),
                );
                Arc::new(later.with_kind(Kind::Sequence(items)))
            }
            Rule::ToMapping => merge_mappings(&to_mapping(earlier), &to_mapping(later), path)?,
            Rule::ToDependencies => {
                merge_mappings(&to_dependencies(earlier), &to_dependencies(later), path)?
            }
            Rule::Build => merge_mappings(&build_mapping(earlier), &build_mapping(later), path)?,
            Rule::Logging => {
                let driver = |n: &Node| n.get("driver").and_then(|d| d.str().map(str::to_string));
                match (driver(later), driver(earlier)) {
                    (Some(a), Some(b)) if a != b => later.clone(),
                    _ => merge_mappings(earlier, later, path)?,
                }
            }
        });
    }
    // A null later value leaves the earlier one (compose-go: `o == nil`).
    if later.is_null() {
        return Ok(earlier.clone());
    }
    match (&earlier.kind, &later.kind) {
        (Kind::Mapping(_), Kind::Mapping(_)) => merge_mappings(earlier, later, path),
        (Kind::Sequence(a), Kind::Sequence(b)) => {
            let mut items = a.clone();
            items.extend(b.iter().cloned());
            Ok(Arc::new(later.with_kind(Kind::Sequence(items))))
        }
        (Kind::Mapping(_), _) | (Kind::Sequence(_), _) => Err(MergeError {
            message: format!("cannot override {}", path.join(".")),
            node: later.clone(),
        }),
        _ => Ok(later.clone()),
    }
}

/// Two mappings merged key by key (compose-go's `mergeMappings`): a key
/// only one has is kept, a key both have is merged.
pub(crate) fn merge_mappings(
    earlier: &Arc<Node>,
    later: &Arc<Node>,
    path: &mut Vec<String>,
) -> Result<Arc<Node>, MergeError> {
    let mut entries: Vec<Entry> = earlier.entries().to_vec();
    let mut index: HashMap<String, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.key.clone(), i))
        .collect();
    for entry in later.entries() {
        match index.get(&entry.key) {
            None => {
                index.insert(entry.key.clone(), entries.len());
                entries.push(entry.clone());
            }
            Some(&i) => {
                path.push(entry.key.clone());
                let merged = merge(&entries[i].value, &entry.value, path);
                path.pop();
                entries[i] = Entry {
                    key: entry.key.clone(),
                    key_src: entry.key_src,
                    value: merged?,
                };
            }
        }
    }
    // The merged mapping is where the later one is written, when it is.
    let base = if later.is_mapping() { later } else { earlier };
    let kind = Kind::Mapping(entries);
    Ok(Arc::new(Node {
        keys: KeyIndex::of(&kind),
        kind,
        tag: base.tag.clone(),
        src: base.src,
        entry_key: None,
    }))
}

/// A scalar made from a mapping entry (`KEY=value`, or `KEY` for a null).
fn entry_string(entry: &Entry) -> Arc<Node> {
    let (value, raw) = if entry.value.is_null() {
        (Interpolated::Text(entry.key.clone()), entry.key.clone())
    } else {
        let value = match entry.value.interpolated() {
            Some(Interpolated::Text(t)) => Interpolated::Text(format!("{}={t}", entry.key)),
            Some(other) => other.clone(),
            None => Interpolated::Invalid(format!("`{}` is not a string", entry.key)),
        };
        let raw = format!("{}={}", entry.key, entry.value.raw().unwrap_or(""));
        (value, raw)
    };
    Arc::new(Node {
        kind: Kind::Scalar {
            raw,
            style: Style::DoubleQuoted,
            value,
        },
        tag: None,
        // Where the value is written (the key, for a name alone).
        src: if entry.value.is_null() {
            entry.key_src
        } else {
            entry.value.src
        },
        entry_key: Some(entry.key_src),
        keys: KeyIndex::default(),
    })
}

/// compose-go's `convertIntoSequence`: a mapping as sorted `KEY=value`
/// strings, a sequence as it is, a string as a sequence of one.
pub(crate) fn to_sequence(node: &Arc<Node>) -> Vec<Arc<Node>> {
    match &node.kind {
        Kind::Sequence(items) => items.clone(),
        Kind::Mapping(entries) => {
            let mut items: Vec<Arc<Node>> = Vec::new();
            for entry in entries {
                match &entry.value.kind {
                    Kind::Sequence(values) => {
                        for value in values {
                            items.push(entry_string(&Entry {
                                key: entry.key.clone(),
                                key_src: entry.key_src,
                                value: value.clone(),
                            }));
                        }
                    }
                    _ => items.push(entry_string(entry)),
                }
            }
            items.sort_by(|a, b| a.raw().cmp(&b.raw()));
            items
        }
        Kind::Scalar { .. } if node.is_null() => Vec::new(),
        Kind::Scalar { .. } => vec![node.clone()],
    }
}

/// compose-go's `convertIntoMapping` (no defaults): a sequence of names as
/// a mapping of each to null.
fn to_mapping(node: &Arc<Node>) -> Arc<Node> {
    match &node.kind {
        Kind::Sequence(items) => {
            let entries = items
                .iter()
                .filter_map(|item| {
                    Some(Entry {
                        key: item.str()?.to_string(),
                        key_src: item.src,
                        value: Arc::new(Node {
                            kind: Kind::Scalar {
                                raw: String::new(),
                                style: Style::Plain,
                                value: Interpolated::Text(String::new()),
                            },
                            tag: None,
                            src: item.src,
                            entry_key: None,
                            keys: KeyIndex::default(),
                        }),
                    })
                })
                .collect();
            Arc::new(node.with_kind(Kind::Mapping(entries)))
        }
        _ => node.clone(),
    }
}

/// compose-go's `convertIntoMapping` for `depends_on`: each name of a
/// sequence maps to `{condition: service_started, required: true}`, the
/// long form, which the schema checks the merged model against.
fn to_dependencies(node: &Arc<Node>) -> Arc<Node> {
    let Kind::Sequence(items) = &node.kind else {
        return node.clone();
    };
    let scalar = |text: &str, src: Src| {
        Arc::new(Node {
            kind: Kind::Scalar {
                raw: text.to_string(),
                style: Style::Plain,
                value: Interpolated::Text(text.to_string()),
            },
            tag: None,
            src,
            entry_key: None,
            keys: KeyIndex::default(),
        })
    };
    let entries = items
        .iter()
        .filter_map(|item| {
            let field = |key: &str, text: &str| Entry {
                key: key.to_string(),
                key_src: item.src,
                value: scalar(text, item.src),
            };
            let long_form = vec![
                field("condition", "service_started"),
                field("required", "true"),
            ];
            Some(Entry {
                key: item.str()?.to_string(),
                key_src: item.src,
                value: Arc::new(item.with_kind(Kind::Mapping(long_form))),
            })
        })
        .collect();
    Arc::new(node.with_kind(Kind::Mapping(entries)))
}

/// `build: ./dir` as `{context: ./dir}`.
fn build_mapping(node: &Arc<Node>) -> Arc<Node> {
    match &node.kind {
        Kind::Scalar { .. } if !node.is_null() => {
            Arc::new(node.with_kind(Kind::Mapping(vec![Entry {
                key: "context".into(),
                key_src: node.src,
                value: node.clone(),
            }])))
        }
        _ => node.clone(),
    }
}

fn scalar_key(node: &Node) -> Option<String> {
    node.str().map(str::to_string)
}

/// The paths a file tags `!reset` or `!override` (compose-go's
/// `ResetProcessor`: keys of mappings, as dotted paths; an item of a
/// sequence records its index, which removes nothing), and the file's
/// model without its `!reset` values.
pub(crate) fn take_resets(node: &Arc<Node>) -> (Arc<Node>, Vec<Vec<String>>) {
    let mut resets = Resets::default();
    let kept = resets
        .strip(node, &mut Vec::new())
        .unwrap_or_else(|| node.clone());
    (kept, resets.paths)
}

/// How many tagged places [`take_resets`] records: an alias shared down a
/// chain reaches one tagged node by exponentially many paths, and past
/// this many the values are still stripped but their paths not recorded.
const MAX_RESET_PATHS: usize = 100_000;

/// The walk of [`take_resets`]. Aliased nodes are shared (`Arc`), so a
/// subtree is asked once whether it holds a tag: an alias bomb without
/// tags costs its size as written, not as expanded.
#[derive(Default)]
struct Resets {
    paths: Vec<Vec<String>>,
    /// Whether the subtree at a node (by address) holds a tag.
    tagged: HashMap<*const Node, bool>,
    /// What stripping a node (by address) leaves: the same wherever the
    /// node is reached from.
    stripped: HashMap<*const Node, Option<Arc<Node>>>,
}

impl Resets {
    fn is_tagged(&mut self, node: &Arc<Node>) -> bool {
        // Only a node held in more than one place (an alias's target) can
        // be reached twice; remembering every other node cost a hash insert
        // per node of every compose file, for nothing.
        let shared = Arc::strong_count(node) > 1;
        let key = Arc::as_ptr(node);
        if shared && let Some(&known) = self.tagged.get(&key) {
            return known;
        }
        let tagged = matches!(node.tag.as_deref(), Some("!reset" | "!override"))
            || match &node.kind {
                Kind::Mapping(entries) => entries.iter().any(|e| self.is_tagged(&e.value)),
                Kind::Sequence(items) => items.iter().any(|i| self.is_tagged(i)),
                Kind::Scalar { .. } => false,
            };
        if shared {
            self.tagged.insert(key, tagged);
        }
        tagged
    }

    fn record(&mut self, path: &[String]) {
        if self.paths.len() < MAX_RESET_PATHS {
            self.paths.push(path.to_vec());
        }
    }

    /// `None` when the node itself is reset.
    fn strip(&mut self, node: &Arc<Node>, path: &mut Vec<String>) -> Option<Arc<Node>> {
        if !self.is_tagged(node) {
            return Some(node.clone());
        }
        let key = Arc::as_ptr(node);
        if self.paths.len() >= MAX_RESET_PATHS
            && let Some(known) = self.stripped.get(&key)
        {
            return known.clone();
        }
        let kept = self.strip_tagged(node, path);
        self.stripped.insert(key, kept.clone());
        kept
    }

    fn strip_tagged(&mut self, node: &Arc<Node>, path: &mut Vec<String>) -> Option<Arc<Node>> {
        match node.tag.as_deref() {
            Some("!reset") => {
                self.record(path);
                return None;
            }
            Some("!override") => {
                self.record(path);
                return Some(node.clone());
            }
            _ => {}
        }
        match &node.kind {
            Kind::Mapping(entries) => {
                let mut changed = false;
                let mut out = Vec::with_capacity(entries.len());
                for entry in entries {
                    path.push(entry.key.clone());
                    let kept = self.strip(&entry.value, path);
                    path.pop();
                    match kept {
                        Some(value) => {
                            changed |= !Arc::ptr_eq(&value, &entry.value);
                            out.push(Entry {
                                value,
                                ..entry.clone()
                            });
                        }
                        None => changed = true,
                    }
                }
                Some(if changed {
                    Arc::new(node.with_kind(Kind::Mapping(out)))
                } else {
                    node.clone()
                })
            }
            Kind::Sequence(items) => {
                let mut changed = false;
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    let kept = self.strip(item, path);
                    path.pop();
                    match kept {
                        Some(value) => {
                            changed |= !Arc::ptr_eq(&value, item);
                            out.push(value);
                        }
                        None => changed = true,
                    }
                }
                Some(if changed {
                    Arc::new(node.with_kind(Kind::Sequence(out)))
                } else {
                    node.clone()
                })
            }
            Kind::Scalar { .. } => Some(node.clone()),
        }
    }
}

/// Removes the values at `paths` from a model before a file tagging them
/// is merged over it (compose-go's `applyNullOverrides`: mapping keys
/// only; `*` in a recorded path matches any key).
pub(crate) fn apply_resets(node: &Arc<Node>, paths: &[Vec<String>]) -> Arc<Node> {
    if paths.is_empty() {
        return node.clone();
    }
    let mut path = Vec::new();
    remove_at(node, paths, &mut path)
}

fn remove_at(node: &Arc<Node>, paths: &[Vec<String>], path: &mut Vec<String>) -> Arc<Node> {
    // Only what lies on the way to a recorded path can change.
    let on_the_way = paths.iter().any(|p| {
        p.len() > path.len() && p.iter().zip(path.iter()).all(|(a, b)| a == "*" || a == b)
    });
    if !on_the_way {
        return node.clone();
    }
    let Kind::Mapping(entries) = &node.kind else {
        return node.clone();
    };
    let mut out = Vec::with_capacity(entries.len());
    let mut changed = false;
    for entry in entries {
        path.push(entry.key.clone());
        let removed = paths.iter().any(|p| {
            p.len() == path.len() && p.iter().zip(path.iter()).all(|(a, b)| a == "*" || a == b)
        });
        if removed {
            changed = true;
        } else {
            let value = remove_at(&entry.value, paths, path);
            changed |= !Arc::ptr_eq(&value, &entry.value);
            out.push(Entry {
                value,
                ..entry.clone()
            });
        }
        path.pop();
    }
    if changed {
        Arc::new(node.with_kind(Kind::Mapping(out)))
    } else {
        node.clone()
    }
}

/// compose-go's canonical form, where it changes how a later file merges:
/// `gpus: all` (a string) is `[{count: all}]`, so a later file's `gpus:`
/// list is appended to it and a later string cannot override it.
pub fn canonical(root: &Arc<Node>) -> Arc<Node> {
    let Some(services) = root.get("services") else {
        return root.clone();
    };
    let mut changed = false;
    let entries: Vec<Entry> = services
        .entries()
        .iter()
        .map(|service| {
            let Some(gpus) = service.value.entry("gpus") else {
                return service.clone();
            };
            // Only the string `all` is a request; any other scalar is one
            // the schema refuses (`gpus: 1` must be a string, `"1"` must be
            // `all`), which `validate` reports as written.
            if !matches!(gpus.value.kind, Kind::Scalar { .. })
                || gpus.value.is_null()
                || gpus.value.str() != Some("all")
            {
                return service.clone();
            }
            changed = true;
            let count = Arc::new(Node {
                kind: Kind::Scalar {
                    raw: "all".into(),
                    style: Style::Plain,
                    value: Interpolated::Text("all".into()),
                },
                tag: None,
                src: gpus.value.src,
                entry_key: None,
                keys: KeyIndex::default(),
            });
            let request = Arc::new(gpus.value.with_kind(Kind::Mapping(vec![Entry {
                key: "count".into(),
                key_src: gpus.key_src,
                value: count,
            }])));
            let list = Arc::new(gpus.value.with_kind(Kind::Sequence(vec![request])));
            let service_entries = service
                .value
                .entries()
                .iter()
                .map(|e| {
                    if e.key == "gpus" {
                        Entry {
                            value: list.clone(),
                            ..e.clone()
                        }
                    } else {
                        e.clone()
                    }
                })
                .collect();
            Entry {
                value: Arc::new(service.value.with_kind(Kind::Mapping(service_entries))),
                ..service.clone()
            }
        })
        .collect();
    if !changed {
        return root.clone();
    }
    let services = Arc::new(services.with_kind(Kind::Mapping(entries)));
    Arc::new(
        root.with_kind(Kind::Mapping(
            root.entries()
                .iter()
                .map(|e| {
                    if e.key == "services" {
                        Entry {
                            value: services.clone(),
                            ..e.clone()
                        }
                    } else {
                        e.clone()
                    }
                })
                .collect(),
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::tree::{Budget, Builder};
    use crate::syntax::yaml::Yaml;

    /// Compose 2.40.3's own words for each item (measured with `docker
    /// compose config`), and silence for the items it keys.
    #[test]
    fn unicity_refusals_are_compose_words_at_the_item() {
        let refused = |service: &str| {
            let root = tree(&format!("services:\n  t:\n{service}"), 0);
            unicity_refusal(&root).map(|r| r.message)
        };
        for (service, words) in [
            (
                "    environment: [A=1, [a]]\n",
                "services.t.environment.[1]: unexpected type []interface {}",
            ),
            (
                "    environment: [{A: 1}]\n",
                "services.t.environment.[0]: unexpected type map[string]interface {}",
            ),
            (
                "    cap_add: [1]\n",
                "services.t.cap_add.[0]: unexpected type int",
            ),
            (
                "    labels: [~]\n",
                "services.t.labels.[0]: unexpected type <nil>",
            ),
            (
                "    expose: [1.5]\n",
                "services.t.expose.[0]: unsupported expose value %!s(float64=1.5)",
            ),
            (
                "    expose: [1000000.0]\n",
                "services.t.expose.[0]: unsupported expose value %!s(float64=1e+06)",
            ),
            (
                "    expose: [[1, a, ~]]\n",
                "services.t.expose.[0]: unsupported expose value [%!s(int=1) a <nil>]",
            ),
            (
                "    secrets: [true]\n",
                "services.t.secrets.[0]: unsupported expose value %!s(bool=true)",
            ),
            (
                "    volumes: [{source: a}]\n",
                "service volume services.t.volumes.[0] is missing a mount target",
            ),
            (
                "    devices: [{source: /dev/a}]\n",
                "service device services.t.devices.[0] is missing a mount target",
            ),
            (
                "    ports: [{published: 1}]\n",
                "service ports services.t.ports.[0] is missing a target port",
            ),
            (
                "    env_file: [{required: true}]\n",
                "environment path attribute services.t.env_file.[0] is missing",
            ),
        ] {
            assert_eq!(refused(service).as_deref(), Some(words), "{service}");
        }
        for service in [
            "    environment: [A=1, \"B\"]\n    environment2: [1]\n",
            "    environment: {A: 1}\n",
            "    expose: [80, \"81\"]\n",
            "    ports: [8080, \"80:80\", {target: 80}]\n",
            "    secrets: [s, {source: s}]\n",
            "    volumes: [/a:/a, {target: /b}]\n",
            "    env_file: [a.env, {path: b.env}]\n",
        ] {
            assert_eq!(refused(service), None, "{service}");
        }
    }

    fn tree(text: &str, file: u32) -> Arc<Node> {
        let yaml = Yaml::parse(text).unwrap();
        let root = yaml.documents[0].root.unwrap();
        let keep = |t: &str| Interpolated::Text(t.to_string());
        Builder::new(&yaml, file, Budget::default(), &keep)
            .build(root)
            .unwrap()
    }

    /// `later` over `earlier` as a file over the files before it.
    fn over(earlier: &str, later: &str) -> Result<Arc<Node>, MergeError> {
        let dict = canonical(&tree(earlier, 0));
        let (cfg, resets) = take_resets(&tree(later, 1));
        let dict = apply_resets(&dict, &resets);
        let merged = merge_mappings(&dict, &cfg, &mut Vec::new())?;
        Ok(canonical(&enforce_unicity(&merged)))
    }

    fn service(root: &Arc<Node>) -> Arc<Node> {
        root.get_path(&["services", "s"]).unwrap().clone()
    }

    #[test]
    fn device_reservations_are_appended_and_environment_merged_by_name() {
        let merged = over(
            "services:\n  s:\n    deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ['0', '1'], capabilities: [gpu]}]}}}\n    environment: {A: '1', B: '2'}\n    cap_add: [IPC_LOCK]\n",
            "services:\n  s:\n    deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ['2', '3', '4'], capabilities: [gpu]}]}}}\n    environment: [B=3, C=4]\n    cap_add: [IPC_LOCK, SYS_NICE]\n",
        )
        .unwrap();
        let s = service(&merged);
        let devices = s
            .get_path(&["deploy", "resources", "reservations", "devices"])
            .unwrap();
        assert_eq!(devices.items().len(), 2);
        let env: Vec<&str> = s.get("environment").unwrap().strings();
        assert_eq!(env, ["A=1", "B=3", "C=4"]);
        // B=3 is the later file's.
        assert_eq!(s.get("environment").unwrap().items()[1].src.file, 1);
        assert_eq!(
            s.get("cap_add").unwrap().strings(),
            ["IPC_LOCK", "SYS_NICE"]
        );
    }

    #[test]
    fn resets_and_overrides_remove_what_earlier_files_set() {
        let earlier = "services:\n  s:\n    tmpfs: [/dev/shm:size=1g]\n    shm_size: 8g\n    environment: {A: '1', B: '2'}\n";
        let s = service(&over(earlier, "services:\n  s:\n    tmpfs: !reset []\n").unwrap());
        assert!(s.get("tmpfs").is_none());
        let s = service(&over(earlier, "services:\n  s:\n    tmpfs: !override [/tmp]\n").unwrap());
        assert_eq!(s.get("tmpfs").unwrap().strings(), ["/tmp"]);
        let s = service(
            &over(
                earlier,
                "services:\n  s:\n    environment:\n      A: !reset null\n",
            )
            .unwrap(),
        );
        assert_eq!(s.get("environment").unwrap().strings(), ["B=2"]);
        // A tmpfs at the same `target:options` key replaces; another does not.
        let s = service(&over(earlier, "services:\n  s:\n    tmpfs: /dev/shm:size=2g\n").unwrap());
        assert_eq!(s.get("tmpfs").unwrap().strings(), ["/dev/shm:size=2g"]);
        let s =
            service(&over(earlier, "services:\n  s:\n    tmpfs: /dev/shm:mode=1777\n").unwrap());
        assert_eq!(s.get("tmpfs").unwrap().items().len(), 2);
    }

    #[test]
    fn gpus_requests_add_up_and_a_later_string_cannot_override_them() {
        let s = service(
            &over(
                "services:\n  s:\n    gpus: all\n",
                "services:\n  s:\n    gpus: [{driver: nvidia, count: 2}]\n",
            )
            .unwrap(),
        );
        assert_eq!(s.get("gpus").unwrap().items().len(), 2);
        let refused = over(
            "services:\n  s:\n    gpus: all\n",
            "services:\n  s:\n    gpus: all\n",
        );
        assert_eq!(
            refused.unwrap_err().message,
            "cannot override services.s.gpus"
        );
    }

    #[test]
    fn volumes_are_unique_by_target_and_ulimits_replace_by_name() {
        let s = service(
            &over(
                "services:\n  s:\n    volumes: [/dev/shm:/dev/shm, data:/data]\n    ulimits: {memlock: {soft: -1, hard: -1}, stack: 67108864}\n",
                "services:\n  s:\n    volumes: [{type: tmpfs, target: /dev/shm/}]\n    ulimits: {memlock: {soft: 1024}}\n",
            )
            .unwrap(),
        );
        let volumes = s.get("volumes").unwrap().items();
        // `/dev/shm/` long form has a target that is not cleaned: two
        // mounts (compose-go's indexer reads `target` as written).
        assert_eq!(volumes.len(), 3);
        let memlock = s.get_path(&["ulimits", "memlock"]).unwrap();
        assert!(memlock.get("hard").is_none());
        assert_eq!(clean_target("/dev/shm/"), "/dev/shm");
        assert_eq!(mount_target("/dev/shm", false), "/dev/shm");
    }
}

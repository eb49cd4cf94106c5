//! Items of a sequence made unique by key, and the refusals Compose gives
//! when two share one (compose-go's indexers).

use super::*;

/// How the items of a sequence are told apart (compose-go's indexers).
#[derive(Clone, Copy)]
pub(super) enum Unique {
    /// The text before `=` (`KEY=value`), or the whole text.
    KeyValue,
    /// A mount's target: `target:` of the long form, the part after the
    /// first `:` of the short form (the whole text when there is none).
    Volume,
    /// A device's target: the same, for `devices:`.
    Device,
    /// A secret's or config's target, or `<dir>/<source>`.
    Mount(&'static str),
    /// An `env_file` entry's path.
    EnvFile,
    /// A port: the short form as written, the long form as
    /// `host_ip:published:target/protocol` (compose-go's `portIndexer`).
    Port,
    /// An `expose` entry as written.
    Expose,
}

pub(super) const UNIQUE: &[(&[&str], Unique)] = &[
    (&["networks", "*", "labels"], Unique::KeyValue),
    (&["networks", "*", "ipam", "options"], Unique::KeyValue),
    (&["services", "*", "annotations"], Unique::KeyValue),
    (&["services", "*", "build", "args"], Unique::KeyValue),
    (
        &["services", "*", "build", "additional_contexts"],
        Unique::KeyValue,
    ),
    (&["services", "*", "build", "platform"], Unique::KeyValue),
    (&["services", "*", "build", "tags"], Unique::KeyValue),
    (&["services", "*", "build", "labels"], Unique::KeyValue),
    (&["services", "*", "cap_add"], Unique::KeyValue),
    (&["services", "*", "cap_drop"], Unique::KeyValue),
    (&["services", "*", "configs"], Unique::Mount("")),
    (&["services", "*", "deploy", "labels"], Unique::KeyValue),
    (&["services", "*", "dns"], Unique::KeyValue),
    (&["services", "*", "dns_opt"], Unique::KeyValue),
    (&["services", "*", "dns_search"], Unique::KeyValue),
    (&["services", "*", "environment"], Unique::KeyValue),
    (&["services", "*", "env_file"], Unique::EnvFile),
    (&["services", "*", "labels"], Unique::KeyValue),
    (&["services", "*", "links"], Unique::KeyValue),
    (
        &["services", "*", "networks", "*", "aliases"],
        Unique::KeyValue,
    ),
    (
        &["services", "*", "networks", "*", "link_local_ips"],
        Unique::KeyValue,
    ),
    (&["services", "*", "expose"], Unique::Expose),
    (&["services", "*", "ports"], Unique::Port),
    (&["services", "*", "profiles"], Unique::KeyValue),
    (&["services", "*", "secrets"], Unique::Mount("/run/secrets")),
    (&["services", "*", "sysctls"], Unique::KeyValue),
    (&["services", "*", "tmpfs"], Unique::KeyValue),
    (&["services", "*", "volumes"], Unique::Volume),
    // compose-go registers `devices` twice; the later registration wins.
    (&["services", "*", "devices"], Unique::Device),
];

/// An item compose-go's `EnforceUnicity` refuses while it tells a list's
/// items apart, before the schema sees the model: in its words, at the
/// item, and the service it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnicityRefusal {
    pub message: String,
    pub at: crate::syntax::tree::Src,
    pub service: Option<String>,
}

/// The first item of a list compose-go keys (`UNIQUE`) that its indexer refuses
/// (`environment: [1]` is `services.t.environment.[0]: unexpected type
/// int`, a long-form port without a target is refused). Its loader stops
/// there, so the schema's own error for the file is never shown.
pub(crate) fn unicity_refusal(root: &Node) -> Option<UnicityRefusal> {
    let mut path: Vec<&str> = Vec::new();
    refusal_at(root, &mut path)
}

pub(super) fn refusal_at<'a>(node: &'a Node, path: &mut Vec<&'a str>) -> Option<UnicityRefusal> {
    match &node.kind {
        Kind::Mapping(entries) => entries.iter().find_map(|entry| {
            path.push(&entry.key);
            let found = if leads_to_unique(path) {
                refusal_at(&entry.value, path)
            } else {
                None
            };
            path.pop();
            found
        }),
        Kind::Sequence(items) => {
            let (_, kind) = UNIQUE.iter().find(|(pattern, _)| matches(path, pattern))?;
            items.iter().enumerate().find_map(|(index, item)| {
                // compose-go's `tree.Path`: a key's own dots become 👻.
                // Written only for an item refused: nearly every item of
                // every such list in every compose file is accepted.
                let at = || {
                    let mut at: Vec<String> = path.iter().map(|p| p.replace('.', "👻")).collect();
                    at.push(format!("[{index}]"));
                    at.join(".")
                };
                let message = indexer_refuses(*kind, item, at)?;
                Some(UnicityRefusal {
                    message,
                    at: item.src,
                    service: match path.as_slice() {
                        ["services", name, ..] => Some(name.to_string()),
                        _ => None,
                    },
                })
            })
        }
        Kind::Scalar { .. } => None,
    }
}

/// What compose-go's indexer for `kind` says of `item` at `path`, when it
/// refuses it (override/uncity.go).
pub(super) fn indexer_refuses(
    kind: Unique,
    item: &Node,
    path: impl FnOnce() -> String,
) -> Option<String> {
    // Only a scalar is decoded whole to be typed: a list or mapping item
    // may be an alias bomb, and its kind is its Go type already.
    let scalar = match &item.kind {
        Kind::Scalar { .. } => Some(crate::schema::compose::decoded(item)),
        _ => None,
    };
    let type_name = match &scalar {
        Some(value) => go_type(value),
        None if item.is_mapping() => "map[string]interface {}",
        None => "[]interface {}",
    };
    let is_string = type_name == "string";
    let is_int = type_name == "int";
    let target_is_text = || {
        item.get("target")
            .is_some_and(|t| go_type(&crate::schema::compose::decoded(t)) == "string")
    };
    let refused = match kind {
        Unique::KeyValue => !is_string,
        Unique::Volume | Unique::Device => item.is_mapping() && !target_is_text(),
        Unique::Expose => !is_string && !is_int,
        Unique::Mount(_) => !is_string && !item.is_mapping(),
        Unique::Port => item.is_mapping() && item.get("target").is_none(),
        Unique::EnvFile => item.is_mapping() && item.get("path").is_none(),
    };
    if !refused {
        return None;
    }
    let path = path();
    Some(match kind {
        Unique::KeyValue => format!("{path}: unexpected type {type_name}"),
        Unique::Volume => format!("service volume {path} is missing a mount target"),
        Unique::Device => format!("service device {path} is missing a mount target"),
        Unique::Expose | Unique::Mount(_) => {
            // Compose prints the whole value; past a few thousand nodes
            // (an alias bomb) it is not written out here.
            let shown = match scalar {
                Some(value) => go_s(&value),
                None if item.size(MAX_SHOWN_NODES) <= MAX_SHOWN_NODES => {
                    go_s(&crate::schema::compose::decoded(item))
                }
                None => "[…]".to_string(),
            };
            format!("{path}: unsupported expose value {shown}")
        }
        Unique::Port => format!("service ports {path} is missing a target port"),
        Unique::EnvFile => format!("environment path attribute {path} is missing"),
    })
}

/// How large a refused item [`indexer_refuses`] writes out in full.
pub(super) const MAX_SHOWN_NODES: usize = 1_000;

/// The Go type (`%T`) of a value go-yaml decoded into an `interface{}`.
pub(super) fn go_type(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int",
        Value::Number(n) if n.is_u64() => "uint64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// A decoded value as Go's `fmt` prints it with `%s`: a string as it is,
/// anything else as `%!s(int=1)`, lists and maps (keys sorted) by item.
/// A nil inside a list or map is `<nil>`, alone `%!s(<nil>)`.
pub(super) fn go_s(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "%!s(<nil>)".to_string(),
        other => go_s_inner(other),
    }
}

pub(super) fn go_s_inner(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "<nil>".to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_s_inner).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(key, value)| format!("{key}:{}", go_s_inner(value)))
                .collect();
            format!("map[{}]", entries.join(" "))
        }
        Value::Bool(b) => format!("%!s(bool={b})"),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => format!("%!s(int={i})"),
            (None, Some(u), _) => format!("%!s(uint64={u})"),
            (_, _, f) => format!("%!s(float64={})", go_float(f.unwrap_or(0.0))),
        },
    }
}

/// A float as Go's `%v` writes it (`strconv.FormatFloat(f, 'g', -1, 64)`):
/// the shortest digits that read back, in exponent form (`1e+06`) when
/// the exponent is below -4 or 6 and over.
pub(super) fn go_float(f: f64) -> String {
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        return format!("{f}");
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

/// The key an item is told apart by; `None` when compose-go refuses the
/// item (a long-form mount without a target).
pub(super) fn unique_key(kind: Unique, item: &Node) -> Option<String> {
    match kind {
        Unique::KeyValue => item
            .str()
            .or_else(|| item.raw())
            .map(|t| t.split_once('=').map_or(t, |(k, _)| k).to_string()),
        Unique::Volume | Unique::Device => match &item.kind {
            Kind::Mapping(_) => item.get("target")?.str().map(str::to_string),
            Kind::Scalar { .. } => {
                let text = item.str().or_else(|| item.raw())?;
                Some(mount_target(text, matches!(kind, Unique::Device)))
            }
            Kind::Sequence(_) => Some(String::new()),
        },
        Unique::Mount(dir) => match &item.kind {
            Kind::Mapping(_) => match item.get("target").and_then(|t| t.str()) {
                Some(target) => Some(target.to_string()),
                None => Some(format!(
                    "{dir}/{}",
                    item.get("source").and_then(|s| s.str()).unwrap_or("")
                )),
            },
            _ => Some(format!("{dir}/{}", item.str().unwrap_or(""))),
        },
        Unique::Expose => item.str().or_else(|| item.raw()).map(str::to_string),
        Unique::Port => match &item.kind {
            Kind::Mapping(_) => {
                let field = |key: &str| item.get(key).and_then(|v| v.str()).map(str::to_string);
                // compose-go refuses a long-form port without a target.
                let target = field("target")?;
                Some(format!(
                    "{}:{}:{target}/{}",
                    field("host_ip").unwrap_or_else(|| "0.0.0.0".into()),
                    field("published").unwrap_or_default(),
                    field("protocol").unwrap_or_else(|| "tcp".into()),
                ))
            }
            _ => item.str().or_else(|| item.raw()).map(str::to_string),
        },
        Unique::EnvFile => match &item.kind {
            Kind::Mapping(_) => item.get("path")?.str().map(str::to_string),
            _ => item.str().map(str::to_string),
        },
    }
}

/// A short-form mount's or device's target: what follows the first `:`
/// (up to the next), or the whole text for one with no `:`.
pub(crate) fn mount_target(text: &str, device: bool) -> String {
    let parts: Vec<&str> = text.split(':').collect();
    let target = match parts.len() {
        1 => parts[0],
        _ => parts[1],
    };
    if device {
        target.to_string()
    } else {
        clean_target(target)
    }
}

/// Go's `path.Clean` for a mount target (`/dev/shm/` is `/dev/shm`).
pub(crate) fn clean_target(target: &str) -> String {
    if target.is_empty() {
        return String::new();
    }
    let absolute = target.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// compose-go's `EnforceUnicity` over a project model: in each sequence
/// with a key, a later item with the key of an earlier one replaces it in
/// the earlier one's place.
pub(crate) fn enforce_unicity(root: &Arc<Node>) -> Arc<Node> {
    let mut path: Vec<&str> = Vec::new();
    unique_at(root, &mut path)
}

/// Whether some [`UNIQUE`] pattern lies at or below `path`. Every pattern
/// starts `services.*` or `networks.*`; below that, the key the pattern
/// names is compared first, since most keys of a service lead nowhere.
pub(super) fn leads_to_unique(path: &[&str]) -> bool {
    match path {
        [] | [_, _] => true,
        [root] => matches!(*root, "services" | "networks"),
        [root, _, key, below @ ..] => UNIQUE.iter().any(|(pattern, _)| {
            pattern.len() >= path.len()
                && pattern[2] == *key
                && pattern[0] == *root
                && below
                    .iter()
                    .zip(&pattern[3..])
                    .all(|(p, q)| *q == "*" || p == q)
        }),
    }
}

pub(super) fn unique_at<'a>(node: &'a Arc<Node>, path: &mut Vec<&'a str>) -> Arc<Node> {
    match &node.kind {
        Kind::Mapping(entries) => {
            // The entries are copied only once one of them changes: most
            // files have nothing to drop.
            let mut out: Option<Vec<Entry>> = None;
            for (i, entry) in entries.iter().enumerate() {
                path.push(&entry.key);
                let value = if leads_to_unique(path) {
                    unique_at(&entry.value, path)
                } else {
                    entry.value.clone()
                };
                path.pop();
                if out.is_none() && !Arc::ptr_eq(&value, &entry.value) {
                    out = Some(entries[..i].to_vec());
                }
                if let Some(out) = &mut out {
                    out.push(Entry {
                        value,
                        ..entry.clone()
                    });
                }
            }
            match out {
                Some(out) => Arc::new(node.with_kind(Kind::Mapping(out))),
                None => node.clone(),
            }
        }
        // One item cannot repeat another.
        Kind::Sequence(items) if items.len() < 2 => node.clone(),
        Kind::Sequence(items) => {
            let Some(kind) = UNIQUE
                .iter()
                .find(|(pattern, _)| matches(path, pattern))
                .map(|(_, kind)| *kind)
            else {
                return node.clone();
            };
            let mut out: Vec<Arc<Node>> = Vec::with_capacity(items.len());
            let mut seen: HashMap<String, usize> = HashMap::new();
            for item in items {
                let Some(key) = unique_key(kind, item) else {
                    out.push(item.clone());
                    continue;
                };
                match seen.get(&key) {
                    Some(&i) => out[i] = item.clone(),
                    None => {
                        seen.insert(key, out.len());
                        out.push(item.clone());
                    }
                }
            }
            if out.len() == items.len() {
                node.clone()
            } else {
                Arc::new(node.with_kind(Kind::Sequence(out)))
            }
        }
        Kind::Scalar { .. } => node.clone(),
    }
}

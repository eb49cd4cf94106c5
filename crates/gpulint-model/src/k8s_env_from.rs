//! Variables a Kubernetes container takes from a ConfigMap through
//! `envFrom`, when that ConfigMap is defined in the same YAML stream.
//! Every key of its `data` becomes a variable, with the reference's
//! `prefix` in front (as the kubelet does).

use crate::syntax::yaml::{NodeId, Yaml};
use crate::workload::EnvVar;

/// One variable and the ConfigMap it comes from.
#[derive(Debug, Clone)]
pub struct ConfigMapVar {
    pub config_map: String,
    /// Named with the prefix; `node` and `range` are the `data` entry's.
    pub var: EnvVar,
}

fn str_at<'y>(yaml: &'y Yaml, map: NodeId, path: &[&str]) -> Option<&'y str> {
    yaml.get_path(map, path).and_then(|e| yaml.str(e.value))
}

/// The ConfigMap named `name` among the stream's documents.
fn config_map(yaml: &Yaml, name: &str) -> Option<NodeId> {
    yaml.documents.iter().find_map(|doc| {
        let root = yaml.resolve(doc.root?);
        let is_config_map = yaml.is_mapping(root)
            && str_at(yaml, root, &["apiVersion"]) == Some("v1")
            && str_at(yaml, root, &["kind"]) == Some("ConfigMap")
            && str_at(yaml, root, &["metadata", "name"]) == Some(name);
        is_config_map.then_some(root)
    })
}

/// The variables the container at `container` gets from ConfigMaps of the
/// stream through its `envFrom`.
pub fn config_map_env(yaml: &Yaml, container: NodeId) -> Vec<ConfigMapVar> {
    let mut out = Vec::new();
    let Some(env_from) = yaml.get(yaml.resolve(container), "envFrom") else {
        return out;
    };
    for &source in yaml.items(env_from.value) {
        let source = yaml.resolve(source);
        let Some(name) = str_at(yaml, source, &["configMapRef", "name"]) else {
            continue;
        };
        let prefix = str_at(yaml, source, &["prefix"]).unwrap_or("");
        let Some(data) = config_map(yaml, name).and_then(|cm| yaml.get(cm, "data")) else {
            continue;
        };
        for entry in yaml.entries(data.value) {
            let Some(key) = yaml.str(entry.key) else {
                continue;
            };
            out.push(ConfigMapVar {
                config_map: name.to_string(),
                var: EnvVar {
                    name: format!("{prefix}{key}"),
                    value: yaml.str(entry.value).map(str::to_string),
                    node: entry.key,
                    range: yaml.range(entry.key).cover(yaml.range(entry.value)),
                },
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_map_keys_become_variables() {
        let src = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nccl\ndata:\n  NCCL_P2P_DISABLE: \"1\"\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    envFrom:\n    - configMapRef: {name: nccl}\n    - configMapRef: {name: nccl}\n      prefix: X_\n    - configMapRef: {name: elsewhere}\n";
        let yaml = Yaml::parse(src).unwrap();
        let pod = yaml.documents[1].root.unwrap();
        let container = yaml.items(yaml.get_path(pod, &["spec", "containers"]).unwrap().value)[0];
        let vars = config_map_env(&yaml, container);
        let names: Vec<_> = vars.iter().map(|v| v.var.name.as_str()).collect();
        assert_eq!(names, ["NCCL_P2P_DISABLE", "X_NCCL_P2P_DISABLE"]);
        assert_eq!(vars[0].var.value.as_deref(), Some("1"));
        assert_eq!(
            &src[vars[0].var.range.as_range()],
            "NCCL_P2P_DISABLE: \"1\""
        );
    }
}

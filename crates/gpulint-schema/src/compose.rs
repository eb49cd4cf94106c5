//! The compose-spec schema, applied as compose-go v2.9.1 applies it
//! (`loader/loader.go` `loadYamlFile`): on the model once each file is
//! interpolated, its includes and extends applied and merged over the
//! files before it, before the model is made canonical. Compose then
//! prints `validating FILE: ` and the error in the words its `message` module gives.

use crate::instance;
use crate::message;
use crate::quick::Checker;
use crate::syntax::tree::Node;
use crate::{DecidedBy, Leaf, LeafKind, RuleCode, SchemaError};
use boon::{Compiler, InstanceToken, SchemaIndex, Schemas, ValidationError};
use message::steps;
use std::sync::OnceLock;

/// The most nodes a model may expand to for the schema to be asked: ten
/// times the largest real project seen (6,400 services).
const MAX_NODES: usize = 1_000_000;

/// The vendored schema (`schemas/README.md`).
const SCHEMA: &str = include_str!("../schemas/compose-spec.json");

/// compose-go's `interpolateTypeCastMapping`: where interpolation turns a
/// string into a number or boolean before the schema sees it.
const CASTS: &[&[&str]] = &[
    &["services", "*", "cpu_count"],
    &["services", "*", "cpu_percent"],
    &["services", "*", "cpu_period"],
    &["services", "*", "cpu_quota"],
    &["services", "*", "cpu_rt_period"],
    &["services", "*", "cpu_rt_runtime"],
    &["services", "*", "cpus"],
    &["services", "*", "cpu_shares"],
    &["services", "*", "init"],
    &["services", "*", "deploy", "replicas"],
    &["services", "*", "deploy", "update_config", "parallelism"],
    &[
        "services",
        "*",
        "deploy",
        "update_config",
        "max_failure_ratio",
    ],
    &["services", "*", "deploy", "rollback_config", "parallelism"],
    &[
        "services",
        "*",
        "deploy",
        "rollback_config",
        "max_failure_ratio",
    ],
    &["services", "*", "deploy", "restart_policy", "max_attempts"],
    &[
        "services",
        "*",
        "deploy",
        "placement",
        "max_replicas_per_node",
    ],
    &["services", "*", "healthcheck", "retries"],
    &["services", "*", "healthcheck", "disable"],
    &["services", "*", "oom_kill_disable"],
    &["services", "*", "oom_score_adj"],
    &["services", "*", "pids_limit"],
    &["services", "*", "ports", "[]", "target"],
    &["services", "*", "privileged"],
    &["services", "*", "read_only"],
    &["services", "*", "scale"],
    &["services", "*", "stdin_open"],
    &["services", "*", "tty"],
    &["services", "*", "ulimits", "*"],
    &["services", "*", "ulimits", "*", "hard"],
    &["services", "*", "ulimits", "*", "soft"],
    &["services", "*", "volumes", "[]", "read_only"],
    &["services", "*", "volumes", "[]", "volume", "nocopy"],
    &["networks", "*", "external"],
    &["networks", "*", "internal"],
    &["networks", "*", "attachable"],
    &["networks", "*", "enable_ipv4"],
    &["networks", "*", "enable_ipv6"],
    &["volumes", "*", "external"],
    &["secrets", "*", "external"],
    &["configs", "*", "external"],
];

/// Where the schema is compiled from. boon checks every schema against
/// its draft's metaschema before compiling it, except one it loads from
/// json-schema.org, as it does the metaschemas themselves: that check
/// loads and compiles all six metaschemas, three times the work of
/// compiling the Compose schema, on every run. The vendored schema is
/// placed there so that a one-file check does not pay for it; the test
/// `the_vendored_schema_is_valid_draft_07` runs the check instead.
const FAST_LOCATION: &str = "https://json-schema.org/gpulint-vendored/compose-spec.json";

/// The vendored schema as JSON, parsed once per process.
pub(crate) fn schema_json() -> &'static serde_json::Value {
    static JSON: OnceLock<serde_json::Value> = OnceLock::new();
    JSON.get_or_init(|| {
        serde_json::from_str(SCHEMA).expect("the vendored compose-spec.json is JSON")
    })
}

/// The yes-or-no checker that spares a valid file boon's compile.
fn quick_checker() -> Option<&'static Checker> {
    static CHECKER: OnceLock<Option<Checker>> = OnceLock::new();
    CHECKER.get_or_init(|| Checker::new(schema_json())).as_ref()
}

/// The schema, compiled by boon on first use (once per process, and only
/// for a file the quick checker does not accept).
fn compiled() -> &'static (Schemas, SchemaIndex) {
    static COMPILED: OnceLock<(Schemas, SchemaIndex)> = OnceLock::new();
    COMPILED
        .get_or_init(|| compile(FAST_LOCATION).expect("the vendored compose-spec.json compiles"))
}

pub(crate) fn compile(location: &str) -> Result<(Schemas, SchemaIndex), Box<boon::CompileError>> {
    // No format is asserted: compose-go never turns assertions on, and
    // a bad duration is refused later, when Compose parses it.
    let mut compiler = Compiler::new();
    compiler.add_resource(location, schema_json().clone())?;
    let mut schemas = Schemas::new();
    let index = compiler.compile(location, &mut schemas)?;
    Ok((schemas, index))
}

/// What Compose's schema refuses in `model` (a merged model before it is
/// made canonical), in Compose's words, at the node that wrote it.
/// A value as compose-go holds it once go-yaml has decoded it and the
/// variables are substituted, before any cast: what its loader's steps
/// before the schema (the unicity of list items) look at.
pub fn decoded(node: &Node) -> serde_json::Value {
    instance::to_json(node, &[]).unwrap_or(serde_json::Value::Null)
}

pub fn validate(model: &Node) -> Result<(), SchemaError> {
    validate_leaving(model, &|_, _| None)
}

/// [`validate`], where the errors `left_to_rules` names (by where they are
/// and what they say) are what a rule reports with more to say (it returns
/// the rule's code): another error is reported before them, so that fixing
/// theirs reveals none.
pub fn validate_leaving(
    model: &Node,
    left_to_rules: &dyn Fn(&[String], &LeafKind) -> Option<RuleCode>,
) -> Result<(), SchemaError> {
    // A mapping with no services and no includes is no compose file here
    // (an Envoy config named `envoy-compose.yaml`, a `package.json` an
    // editor sends): Compose would refuse it if asked to load it, but
    // nothing says anyone does.
    if model.get("services").is_none() && model.get("include").is_none() {
        return Ok(());
    }
    // Aliases share nodes that the JSON value would copy: a model past
    // this many nodes once expanded (an alias bomb) is not converted, and
    // what its schema would say is not known here.
    if model.size(MAX_NODES) > MAX_NODES {
        return Ok(());
    }
    let json = instance::to_json(model, CASTS).map_err(|cast| SchemaError {
        leaves: Vec::new(),
        services: match cast.path.as_slice() {
            [section, name, ..] if section == "services" => vec![name.clone()],
            _ => Vec::new(),
        },
        message: cast.message,
        at: cast.node.src,
        path: cast.path,
        decided_by: instance::decided_by(cast.node, true),
        reported_by: None,
    })?;
    if quick_checker().and_then(|checker| checker.accepts(&json)) == Some(true) {
        return Ok(());
    }
    let (schemas, index) = compiled();
    let Err(error) = schemas.validate(&json, *index) else {
        return Ok(());
    };
    let shell_decided = |e: &ValidationError| {
        let path = steps(e);
        instance::node_at(model, &path).is_some_and(|(node, _)| {
            instance::decided_by(node, values_matter(&e.kind, node)) == DecidedBy::Shell
        })
    };
    let reported_by = |e: &ValidationError| left_to_rules(&message::location(e), &leaf_kind(e));
    let specific =
        message::most_specific(&error, &|e| !shell_decided(e) && reported_by(e).is_none());
    let path = steps(specific);
    let (node, key) = instance::node_at(model, &path).unwrap_or((model, None));
    // A property the schema does not allow is wrong by its name: the
    // finding points at the key; so is a key with nothing under it, whose
    // value has no text to point at.
    let at = match (&specific.kind, key) {
        (boon::ErrorKind::AdditionalProperties { got }, _) => got
            .first()
            .and_then(|name| node.entry(name))
            .map_or(node.src, |entry| entry.key_src),
        (_, Some(key)) if node.is_null() => key,
        _ => node.src,
    };
    Err(SchemaError {
        message: message::words(specific),
        at,
        path: message::location(specific),
        decided_by: instance::decided_by(node, values_matter(&specific.kind, node)),
        reported_by: reported_by(specific),
        services: refused_services(specific, &error),
        leaves: leaves(&error),
    })
}

fn leaf_kind(error: &ValidationError) -> LeafKind {
    match &error.kind {
        boon::ErrorKind::Required { want } => {
            LeafKind::Missing(want.iter().map(|w| w.to_string()).collect())
        }
        boon::ErrorKind::AdditionalProperties { got } => {
            LeafKind::Unknown(got.iter().map(|g| g.to_string()).collect())
        }
        _ => LeafKind::Other,
    }
}

/// The errors at the ends of the tree.
fn leaves(tree: &ValidationError) -> Vec<Leaf> {
    let mut out = Vec::new();
    let mut stack = vec![tree];
    while let Some(error) = stack.pop() {
        if !error.causes.is_empty() {
            stack.extend(error.causes.iter());
            continue;
        }
        let path = message::location(error);
        let kind = leaf_kind(error);
        out.push(Leaf { path, kind });
    }
    out
}

/// The services any error of the tree is in, `first`'s service first.
fn refused_services(first: &ValidationError, tree: &ValidationError) -> Vec<String> {
    fn service_of(error: &ValidationError) -> Option<String> {
        match error.instance_location.tokens.as_slice() {
            [InstanceToken::Prop(section), InstanceToken::Prop(name), ..]
                if section == "services" =>
            {
                Some(name.to_string())
            }
            _ => None,
        }
    }
    let mut services: Vec<String> = service_of(first).into_iter().collect();
    let mut stack = vec![tree];
    while let Some(error) = stack.pop() {
        if let Some(name) = service_of(error)
            && !services.contains(&name)
        {
            services.push(name);
        }
        stack.extend(error.causes.iter());
    }
    services
}

/// Whether what the schema says depends on the values (which a variable
/// the shell sets may change) or only on the shape: an unknown or missing
/// key, or a mapping where a string is due, is wrong whatever the shell
/// sets.
fn values_matter(kind: &boon::ErrorKind, node: &Node) -> bool {
    use boon::ErrorKind as K;
    match kind {
        K::AdditionalProperties { .. }
        | K::Required { .. }
        | K::MinProperties { .. }
        | K::MaxProperties { .. }
        | K::MinItems { .. }
        | K::MaxItems { .. }
        | K::Dependency { .. }
        | K::DependentRequired { .. } => false,
        K::Type { .. } => matches!(node.kind, crate::syntax::tree::Kind::Scalar { .. }),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::{FAST_LOCATION, compile, validate};
    use crate::syntax::tree::{Budget, Builder, Interpolated, Node};
    use crate::syntax::yaml::Yaml;
    use std::sync::Arc;

    fn tree(text: &str) -> Arc<Node> {
        let yaml = Yaml::parse(text).unwrap();
        let root = yaml.documents[0].root.unwrap();
        let keep = |t: &str| {
            if t.contains('$') {
                Interpolated::Unknown("X".into())
            } else {
                Interpolated::Text(t.to_string())
            }
        };
        Builder::new(&yaml, 0, Budget::default(), &keep)
            .build(root)
            .unwrap()
    }

    fn refused(text: &str) -> Option<String> {
        validate(&tree(text)).err().map(|e| e.message)
    }

    /// What [`FAST_LOCATION`] skips at run time: the schema, compiled where
    /// boon checks it against draft 07's metaschema first, is valid.
    #[test]
    fn the_vendored_schema_is_valid_draft_07() {
        if let Err(error) = compile("compose-spec.json") {
            panic!("the vendored schema fails its metaschema: {error:#}");
        }
        assert!(FAST_LOCATION.starts_with("https://json-schema.org/"));
    }

    #[test]
    fn composes_words_for_what_its_schema_refuses() {
        let service =
            |setting: &str| format!("services:\n  t:\n    image: busybox\n    {setting}\n");
        assert_eq!(
            refused(&service("gpus: 1")).as_deref(),
            Some("services.t.gpus must be a string")
        );
        assert_eq!(
            refused(&service("gpus: \"1\"")).as_deref(),
            Some("services.t.gpus value must be 'all'")
        );
        assert_eq!(
            refused(&service("shm_sise: 1g")).as_deref(),
            Some("services.t additional properties 'shm_sise' not allowed")
        );
        assert_eq!(
            refused(&service("ipc: [host]")).as_deref(),
            Some("services.t.ipc must be a string")
        );
        // Formats are not asserted (compose-go never asks for it): a bad
        // duration is refused later, when Compose parses it.
        assert_eq!(refused(&service("healthcheck: {interval: 5x}")), None);
        assert_eq!(
            refused(&service("ulimits: {memlock: unlimited}")).as_deref(),
            Some(
                "error while interpolating services.t.ulimits.memlock: failed to cast to expected type: strconv.Atoi: parsing \"unlimited\": invalid syntax"
            )
        );
        assert_eq!(refused(&service("gpus: all")), None);
        assert_eq!(refused(&service("shm_size: 8g")), None);
        assert_eq!(refused(&service("privileged: \"yes\"")), None);
        assert_eq!(refused("services: {}\nx-anything: [1]\n"), None);
    }

    #[test]
    fn the_key_of_an_unknown_property_and_the_value_of_a_wrong_one() {
        let text = "services:\n  t:\n    image: busybox\n    shm_sise: 1g\n";
        let root = tree(text);
        let error = validate(&root).unwrap_err();
        let key = &root.get("services").unwrap().get("t").unwrap().entries()[1];
        assert_eq!(error.at, key.key_src);
        let root = tree("services:\n  t:\n    gpus: ${N}\n");
        let error = validate(&root).unwrap_err();
        assert_eq!(error.decided_by, crate::DecidedBy::Shell, "{error:?}");
        assert_eq!(error.path, ["services", "t", "gpus"]);
    }
}

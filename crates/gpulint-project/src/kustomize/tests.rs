//! The build over an in-memory tree: what kustomize makes of each field,
//! and where each built value is placed. `tests/it/kustomize.rs` holds the
//! same to the real `kubectl kustomize`.

use super::transformers::split_image;
use super::*;
use crate::vfs::MemoryFs;

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
      - name: main
        image: nvcr.io/nvidia/pytorch:24.01-py3
        env:
        - name: NCCL_DEBUG
          value: INFO
      - name: sidecar
        image: busybox:1.36
";

fn tree(files: &[(&str, &str)]) -> Files {
    Files::snapshot(MemoryFs::new(
        files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())),
    ))
}

fn built(files: &[(&str, &str)], dir: &str) -> Result<Overlay, BuildError> {
    build(&tree(files), Path::new(dir))
}

/// The value at `path` of the built object `kind`.
fn value<'o>(overlay: &'o Overlay, kind: &str, path: &[&str]) -> Option<&'o Arc<Node>> {
    overlay
        .objects
        .iter()
        .find(|o| o.get("kind").and_then(|k| k.str()) == Some(kind))?
        .get_path(path)
}

fn pod(overlay: &Overlay) -> &Arc<Node> {
    value(overlay, "Deployment", &["spec", "template", "spec"]).expect("a pod spec")
}

fn container_names(overlay: &Overlay) -> Vec<String> {
    pod(overlay)
        .get("containers")
        .map(|c| {
            c.items()
                .iter()
                .filter_map(|i| i.get("name")?.str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The text a node of the build was written as, in its own file.
fn written(overlay: &Overlay, node: &Node) -> (String, String) {
    let (file, range) = overlay.place(Origin::Node(node.src));
    let source = &overlay.files[file as usize];
    (
        source.path.display().to_string(),
        source.text[range.start as usize..range.end as usize].to_string(),
    )
}

fn with_overlay(kustomization: &str, patch: &str) -> Vec<(&'static str, String)> {
    vec![
        ("/r/base/deploy.yaml", DEPLOYMENT.to_string()),
        (
            "/r/base/kustomization.yaml",
            "resources:\n- deploy.yaml\n".to_string(),
        ),
        ("/r/overlay/kustomization.yaml", kustomization.to_string()),
        ("/r/overlay/patch.yaml", patch.to_string()),
    ]
}

fn build_overlay(kustomization: &str, patch: &str) -> Result<Overlay, BuildError> {
    let files = with_overlay(kustomization, patch);
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    built(&files, "/r/overlay")
}

const GPU_PATCH: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
      - name: main
        resources:
          limits:
            nvidia.com/gpu: 8
";

#[test]
fn a_patched_value_is_placed_in_the_patch_and_the_rest_in_the_base() {
    let overlay = build_overlay(
        "resources: [../base]\npatches:\n- path: patch.yaml\n",
        GPU_PATCH,
    )
    .unwrap();
    let main = &pod(&overlay).get("containers").unwrap().items()[0];
    let gpus = main
        .get_path(&["resources", "limits", "nvidia.com/gpu"])
        .unwrap();
    assert_eq!(
        written(&overlay, gpus),
        ("/r/overlay/patch.yaml".into(), "8".into())
    );
    // The merge key the patch repeats is still the base's.
    let image = main.get("image").unwrap();
    assert_eq!(written(&overlay, image).0, "/r/base/deploy.yaml");
    assert_eq!(
        written(&overlay, main.get("name").unwrap()).0,
        "/r/base/deploy.yaml"
    );
}

#[test]
fn the_rendered_stream_maps_back_to_where_each_value_is_written() {
    let overlay = build_overlay(
        "resources: [../base]\npatches:\n- path: patch.yaml\n",
        GPU_PATCH,
    )
    .unwrap();
    let rendered = overlay.render().unwrap();
    let at = rendered.text.find("nvidia.com/gpu: 8").unwrap();
    let value = TextRange::new(
        at + "nvidia.com/gpu: ".len(),
        at + "nvidia.com/gpu: 8".len(),
    );
    let (file, range) = overlay.place(rendered.origin(value).unwrap());
    assert_eq!(
        overlay.files[file as usize].path,
        Path::new("/r/overlay/patch.yaml")
    );
    assert_eq!(&GPU_PATCH[range.start as usize..range.end as usize], "8");
    // A whole entry maps to the whole entry.
    let entry = TextRange::new(at, at + "nvidia.com/gpu: 8".len());
    let (_, range) = overlay.place(rendered.origin(entry).unwrap());
    assert_eq!(
        &GPU_PATCH[range.start as usize..range.end as usize],
        "nvidia.com/gpu: 8"
    );
}

#[test]
fn merged_lists_put_the_patch_elements_first_as_kyaml_does() {
    let patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: trainer}\nspec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        image: busybox:1.37\n      - name: extra\n        image: x\n";
    let overlay = build_overlay(
        "resources: [../base]\npatches:\n- path: patch.yaml\n",
        patch,
    )
    .unwrap();
    assert_eq!(container_names(&overlay), ["sidecar", "extra", "main"]);
}

#[test]
fn directives_delete_and_replace_and_null_removes_a_key() {
    let patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: trainer}\nspec:\n  template:\n    spec:\n      containers:\n      - name: sidecar\n        $patch: delete\n      - name: main\n        env: null\n";
    let overlay = build_overlay(
        "resources: [../base]\npatches:\n- path: patch.yaml\n",
        patch,
    )
    .unwrap();
    assert_eq!(container_names(&overlay), ["main"]);
    assert!(
        pod(&overlay).get("containers").unwrap().items()[0]
            .get("env")
            .is_none()
    );

    let replace = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: trainer}\nspec:\n  template:\n    spec:\n      containers:\n      - $patch: replace\n      - name: only\n        image: x\n";
    let overlay = build_overlay(
        "resources: [../base]\npatches:\n- path: patch.yaml\n",
        replace,
    )
    .unwrap();
    assert_eq!(container_names(&overlay), ["only"]);

    let delete =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: trainer}\n$patch: delete\n";
    let overlay = build_overlay(
        "resources: [../base]\npatches:\n- path: patch.yaml\n",
        delete,
    )
    .unwrap();
    assert!(overlay.objects.is_empty());
}

#[test]
fn a_custom_resources_lists_are_replaced_not_merged() {
    let job = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: t}\nspec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n";
    let patch = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: t}\nspec:\n  containers:\n  - name: a\n    resources: {limits: {nvidia.com/gpu: null}}\n";
    let overlay = built(
        &[
            ("/r/job.yaml", job),
            ("/r/patch.yaml", patch),
            (
                "/r/kustomization.yaml",
                "resources: [job.yaml]\npatchesStrategicMerge: [patch.yaml]\n",
            ),
        ],
        "/r",
    )
    .unwrap();
    let containers = value(&overlay, "PyTorchJob", &["spec", "containers"]).unwrap();
    assert_eq!(containers.items().len(), 1);
    // Kept as written, `null` and all.
    let gpu = containers.items()[0]
        .get_path(&["resources", "limits", "nvidia.com/gpu"])
        .unwrap();
    assert!(gpu.is_null());
}

#[test]
fn json_patches_add_replace_remove_move_and_copy() {
    let ops = "- op: add\n  path: /spec/template/spec/containers/0/resources\n  value: {limits: {nvidia.com/gpu: 4}}\n- op: replace\n  path: /spec/template/spec/hostIPC\n  value: true\n- op: remove\n  path: /spec/template/spec/containers/1\n- op: copy\n  from: /spec/template/spec/containers/0/env/0\n  path: /spec/template/spec/containers/0/env/-\n- op: move\n  from: /spec/template/spec/containers/0/image\n  path: /spec/template/spec/containers/0/imageWas\n";
    let k = "resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Deployment, name: \"tr.*\"}\n";
    let overlay = build_overlay(k, ops).unwrap();
    let pod = pod(&overlay);
    let main = &pod.get("containers").unwrap().items()[0];
    assert_eq!(container_names(&overlay), ["main"]);
    assert_eq!(
        main.get_path(&["resources", "limits", "nvidia.com/gpu"])
            .and_then(|n| n.raw()),
        Some("4")
    );
    // `replace` of a key the mapping lacks sets it, as kustomize's does.
    assert_eq!(pod.get("hostIPC").and_then(|n| n.raw()), Some("true"));
    assert_eq!(main.get("env").unwrap().items().len(), 2);
    assert!(main.get("image").is_none() && main.get("imageWas").is_some());
    // An index the list lacks is refused.
    let bad = "- op: replace\n  path: /spec/template/spec/containers/5/image\n  value: x\n";
    let e = build_overlay(k, bad).unwrap_err();
    assert!(e.message.contains("containers/5"), "{e}");
}

#[test]
fn names_namespaces_images_and_replicas() {
    let k = "resources: [../base]\nnamePrefix: prod-\nnameSuffix: -v2\nnamespace: ml\nimages:\n- name: nvcr.io/nvidia/pytorch\n  newTag: 24.08-py3\n- name: busybox\n  newName: registry.local/busybox\n  digest: sha256:abc\nreplicas:\n- name: trainer\n  count: 3\npatches:\n- path: patch.yaml\n";
    let overlay = build_overlay(k, GPU_PATCH).unwrap();
    let object = &overlay.objects[0];
    let at = |path: &[&str]| {
        object
            .get_path(path)
            .and_then(|n| n.raw())
            .map(String::from)
    };
    assert_eq!(
        at(&["metadata", "name"]).as_deref(),
        Some("prod-trainer-v2")
    );
    assert_eq!(at(&["metadata", "namespace"]).as_deref(), Some("ml"));
    assert_eq!(at(&["spec", "replicas"]).as_deref(), Some("3"));
    let images: Vec<String> = pod(&overlay)
        .get("containers")
        .unwrap()
        .items()
        .iter()
        .filter_map(|c| c.get("image")?.raw().map(String::from))
        .collect();
    assert_eq!(
        images,
        [
            "nvcr.io/nvidia/pytorch:24.08-py3",
            "registry.local/busybox@sha256:abc"
        ]
    );
    // The new tag is placed at the kustomization that sets it.
    let image = pod(&overlay).get("containers").unwrap().items()[0]
        .get("image")
        .unwrap();
    assert_eq!(
        written(&overlay, image),
        ("/r/overlay/kustomization.yaml".into(), "24.08-py3".into())
    );
}

#[test]
fn images_split_as_kustomize_splits_them() {
    assert_eq!(split_image("nginx"), ("nginx", ""));
    assert_eq!(split_image("nginx:1.25"), ("nginx", ":1.25"));
    assert_eq!(
        split_image("localhost:5000/a/b:v1"),
        ("localhost:5000/a/b", ":v1")
    );
    assert_eq!(
        split_image("localhost:5000/a/b"),
        ("localhost:5000/a/b", "")
    );
    assert_eq!(split_image("a/b:v1@sha256:00"), ("a/b", ":v1@sha256:00"));
}

#[test]
fn a_component_patches_what_the_kustomization_built_before_it() {
    let files = [
        ("/r/base/deploy.yaml", DEPLOYMENT),
        ("/r/base/kustomization.yaml", "resources: [deploy.yaml]\n"),
        (
            "/r/gpu/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: patch.yaml\n",
        ),
        ("/r/gpu/patch.yaml", GPU_PATCH),
        (
            "/r/overlay/kustomization.yaml",
            "resources: [../base]\ncomponents: [../gpu]\n",
        ),
    ];
    let overlay = built(&files, "/r/overlay").unwrap();
    let main = &pod(&overlay).get("containers").unwrap().items()[0];
    assert!(
        main.get_path(&["resources", "limits", "nvidia.com/gpu"])
            .is_some()
    );
    // A component named as a resource is refused.
    let mut wrong = files;
    wrong[4].1 = "resources: [../base, ../gpu]\n";
    assert!(built(&wrong, "/r/overlay").is_err());
}

#[test]
fn what_gpulint_does_not_build_is_refused_with_the_reason() {
    let refused = |k: &str| build_overlay(k, GPU_PATCH).unwrap_err().message;
    assert!(
        refused("resources:\n- github.com/org/repo//base?ref=v1\n").contains("remote repository")
    );
    assert!(refused("resources: [../base]\nhelmCharts:\n- name: x\n").contains("Helm chart"));
    assert!(refused("resources: [../base]\nvars:\n- name: X\n").contains("vars"));
    assert!(refused("resources: [../missing]\n").contains("is not there"));
    assert!(
        refused("resources: [../base]\nconfigurations: [conf.yaml]\n")
            .contains("`configurations` names")
    );
    assert!(
        refused("resources: [../base]\nreplicas:\n- name: nobody\n  count: 2\n").contains("nobody")
    );
    // A patch that names nothing the build has.
    let other = GPU_PATCH.replace("name: trainer", "name: other");
    let e = build_overlay(
        "resources: [../base]\npatches:\n- path: patch.yaml\n",
        &other,
    )
    .unwrap_err();
    assert!(e.message.contains("other"), "{e}");
    // A file above the kustomization, which kustomize does not read.
    let e = build_overlay("resources: [../base/deploy.yaml]\n", GPU_PATCH).unwrap_err();
    assert!(e.message.contains("outside"), "{e}");
    // A kustomization that includes itself.
    let looped = built(
        &[
            ("/r/a/kustomization.yaml", "resources: [../b]\n"),
            ("/r/b/kustomization.yaml", "resources: [../a]\n"),
        ],
        "/r/a",
    );
    assert!(looped.unwrap_err().message.contains("includes itself"));
}

#[test]
fn a_stream_written_again_keeps_every_value_and_hides_go_templates() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"t\"\ndata:\n  plain: 8\n  quoted: \"8\"\n  single: 'it''s'\n  block: |\n    {{ .Values.x }}\n    line two\n  empty:\n  \"odd key\": yes\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, args: [\"--x={{y}}\", '', \"\\t\"]}]}\n";
    let again = restream(text).unwrap();
    assert!(!again.contains("{{"), "{again}");
    let values = |text: &str| -> Vec<String> {
        let yaml = Yaml::parse(text).unwrap();
        yaml.documents
            .iter()
            .filter_map(|d| d.root)
            .map(|root| {
                let node = Builder::new(&yaml, 0, Budget::default(), &as_written)
                    .build(root)
                    .unwrap();
                format!("{:?}", shape(&node))
            })
            .collect()
    };
    assert_eq!(values(&again), values(text));
}

/// Plain scalars a flow holds that a block reads otherwise (an indicator
/// first, `: ` or ` #` inside) are written quoted, with the same value;
/// the reader's leniency decides which of them arrive at all.
#[test]
fn a_plain_scalar_from_a_flow_is_written_as_a_block_reads_it() {
    let scalars = [
        ">./c", "|x", "&a", "*a", "!x", "%x", "@x", "`x", "#x", "-x", "-", "- x", "?x", "? x",
        ":x", "a:", "a:b", "a #b", "a#b", "8", "-1", "0x1F", "true", "~", "null", "'", "x'", "\"x",
        "a\tb", ".inf",
    ];
    let mut quoted = 0;
    for scalar in scalars {
        for text in [
            format!("a: [{scalar}]\n"),
            format!("a: {{k: {scalar}}}\n"),
            format!("a: [{scalar}, y]\n"),
        ] {
            let Ok(yaml) = Yaml::parse(&text) else {
                continue;
            };
            let Ok(again) = restream(&text) else { continue };
            let reread = Yaml::parse(&again)
                .unwrap_or_else(|e| panic!("{text:?} written as {again:?}: {}", e.message));
            let (before, after) = (first_shape(&yaml), first_shape(&reread));
            if again.contains('"') {
                // Quoted: a string both times.
                quoted += 1;
                assert_eq!(
                    after.replace("(string)", ""),
                    before,
                    "{text:?} as {again:?}"
                );
            } else {
                assert_eq!(after, before, "{text:?} written as {again:?}");
            }
        }
    }
    assert!(
        quoted > 0,
        "no scalar needed quoting: the reader refused them all"
    );
}

/// A key that is longer written again than YAML reads implicit (a control
/// character is one byte read, six written) is written explicit, around
/// the limit and in a sequence's mapping too.
#[test]
fn a_long_key_is_written_as_yaml_reads_it() {
    for length in [0, 1, 160, 163, 165, 166, 170, 500] {
        let key = format!("{}{}", "k".repeat(1000 - length), "\u{16}".repeat(length));
        for text in [
            format!("\"{key}\": 1\nb: [{{\"{key}\": {{c: 2}}}}]\n"),
            format!("a: {{\"{key}\": x, \"\\u0016{key}\": [1]}}\n"),
        ] {
            let yaml = Yaml::parse(&text).unwrap();
            let again = restream(&text).unwrap();
            let reread = Yaml::parse(&again).unwrap_or_else(|e| {
                panic!("{length} control characters: {again:?}: {}", e.message)
            });
            assert_eq!(
                first_shape(&reread),
                first_shape(&yaml),
                "{length} control characters"
            );
        }
    }
}

/// The [`shape`] of a stream's first document.
fn first_shape(yaml: &Yaml) -> String {
    let root = yaml.documents[0].root.unwrap();
    let node = Builder::new(yaml, 0, Budget::default(), &as_written)
        .build(root)
        .unwrap();
    shape(&node)
}

/// A node's value and how YAML types it, without where it is written.
fn shape(node: &Node) -> String {
    match &node.kind {
        Kind::Scalar { raw, .. } => {
            format!("{raw:?}{}", if node.is_plain() { "" } else { "(string)" })
        }
        Kind::Sequence(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| shape(i))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Kind::Mapping(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|e| format!("{:?}: {}", e.key, shape(&e.value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[test]
fn a_replacement_copies_a_value_and_keeps_where_its_source_writes_it() {
    let k = "resources: [../base, settings.yaml]
replacements:
- source: {kind: ConfigMap, name: settings, fieldPath: data.image}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=main].image
- source: {kind: ConfigMap, name: settings, fieldPath: data.domain, options: {delimiter: ., index: 1}}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=main].env.[name=NCCL_DEBUG].value
    options: {delimiter: '-', index: 5}
";
    let mut files = with_overlay(k, "");
    files.push((
        "/r/overlay/settings.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata:\n  image: registry.local/pytorch:25.01\n  domain: a.b.c\n".to_string(),
    ));
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let overlay = built(&files, "/r/overlay").unwrap();
    let main = &pod(&overlay).get("containers").unwrap().items()[0];
    let image = main.get("image").unwrap();
    assert_eq!(
        written(&overlay, image),
        (
            "/r/overlay/settings.yaml".into(),
            "registry.local/pytorch:25.01".into()
        )
    );
    let env = main.get("env").unwrap().items()[0].get("value").unwrap();
    assert_eq!(env.raw(), Some("INFO-b"));
}

#[test]
fn a_build_that_explodes_is_refused_not_followed() {
    // Each copy doubles the container list's subtree: 2^40 nodes rendered.
    let mut ops = String::from("- op: add\n  path: /spec/x\n  value: {a: [1, 2, 3]}\n");
    for _ in 0..40 {
        ops.push_str("- op: copy\n  from: /spec/x\n  path: /spec/x/a/-\n");
    }
    let k = "resources: [../base]\npatches:\n- path: patch.yaml\n  target: {kind: Deployment}\n";
    let overlay = build_overlay(k, &ops).unwrap();
    let e = overlay.render().unwrap_err();
    assert!(e.message.contains("expands past"), "{e}");
    // Bases shared by two kustomizations at each of 20 levels: 2^20 runs.
    let mut files: Vec<(String, String)> = Vec::new();
    for level in 0..20 {
        for side in ["a", "b"] {
            let below = if level == 19 {
                "[]".to_string()
            } else {
                format!("[../a{}, ../b{}]", level + 1, level + 1)
            };
            files.push((
                format!("/r/{side}{level}/kustomization.yaml"),
                format!("resources: {below}\nnamePrefix: {side}-\n"),
            ));
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let e = built(&files, "/r/a0").unwrap_err();
    assert!(e.message.contains("more than 1024 kustomizations"), "{e}");
}

#[test]
fn an_object_two_bases_hold_is_refused_and_one_in_another_namespace_is_not() {
    let second_base = |namespace: &str| {
        let copy = DEPLOYMENT.replacen(
            "  name: trainer\n",
            &format!("  name: trainer\n  namespace: {namespace}\n"),
            1,
        );
        built(
            &[
                ("/r/a/kustomization.yaml", "resources: [d.yaml]\n"),
                ("/r/a/d.yaml", DEPLOYMENT),
                ("/r/b/kustomization.yaml", "resources: [d.yaml]\n"),
                ("/r/b/d.yaml", &copy),
                ("/r/overlay/kustomization.yaml", "resources: [../a, ../b]\n"),
            ],
            "/r/overlay",
        )
    };
    // `default` is where an object that names no namespace is.
    let error = second_base("default").expect_err("a duplicate id");
    assert!(
        error.message.contains("Deployment `trainer` twice"),
        "{}",
        error.message
    );
    assert!(second_base("research").is_ok());
}

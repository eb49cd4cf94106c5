//! Lint time against input size for hostile shapes: it must grow linearly.
//!
//! Each input family is generated at 1x, 2x, 4x, 8x and 16x its base
//! number of units and linted (best of a few runs, the full rule set, as
//! `check --select ALL` would); the report gives the time per unit at each
//! size and the family's growth exponent, the slope of log(time) against
//! log(size) fitted over the five sizes: 1.0 is linear, 2.0 quadratic. The
//! families are the shapes that once grew faster than their input: a merge
//! chain that doubled per level, one mapping with many keys, a Kubernetes
//! stream with many documents, a script with many `docker run` lines,
//! Dockerfile `ARG` doubling chains and nested `${a:-...}` defaults in a
//! `FROM`, and more.
//!
//! `cargo bench --bench adversarial` prints the table. Under `cargo test`
//! (`--all-targets`) it runs small sizes once as a smoke test; set
//! `GPULINT_BENCH_EXPONENT=<max>` to make it fail when a family's exponent
//! exceeds `max` (the point is to catch super-linear growth, not to time
//! the machine; small sizes are noisy, so use it with `--bench`).
//! `GPULINT_BENCH_SCALE=<f>` multiplies every base size,
//! `GPULINT_BENCH_ONLY=<name>` runs one family.

use gpulint::engine::config::Config;
use gpulint::engine::lint_text;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A named generator: units → text, the file name it is linted as, and
/// how many units 1x is when benchmarking.
struct Family {
    name: &'static str,
    file: &'static str,
    base: usize,
    make: fn(usize) -> String,
    /// Other files of the project, by name: written beside `file` in a
    /// temporary directory, which the lint reads from disk.
    beside: fn(usize) -> Vec<(String, String)>,
}

fn nothing_beside(_: usize) -> Vec<(String, String)> {
    Vec::new()
}

/// An `include:` lattice: `compose.yaml` includes the two files of level
/// 0, and each file of a level includes both of the next, so a file at
/// level k is reached by 2^k paths. Compose imports each once.
fn include_diamond(_: usize) -> String {
    format!(
        "include:\n  - l0a.yaml\n  - l0b.yaml\nservices:\n  top:\n    image: {IMAGE}\n    gpus: all\n"
    )
}

fn include_diamond_files(levels: usize) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for level in 0..levels {
        for side in ["a", "b"] {
            let include = if level + 1 < levels {
                format!(
                    "include:\n  - l{next}a.yaml\n  - l{next}b.yaml\n",
                    next = level + 1
                )
            } else {
                String::new()
            };
            files.push((
                format!("l{level}{side}.yaml"),
                format!("{include}services:\n  s{level}{side}:\n    image: {IMAGE}\n    shm_size: 8gb\n    gpus: all\n"),
            ));
        }
    }
    files
}

/// A `.env` whose every line doubles the one before (`A2=${A1}${A1}`):
/// expanded, line n is 2^n long. The expansion limit makes it a located
/// refusal in time linear in the lines.
fn dotenv_doubling(_: usize) -> String {
    format!("services:\n  t:\n    image: {IMAGE}\n    gpus: all\n    shm_size: ${{A1}}\n")
}

fn dotenv_doubling_files(n: usize) -> Vec<(String, String)> {
    let mut env = String::from("A0=xxxxxxxx\n");
    for i in 1..n {
        env.push_str(&format!("A{i}=${{A{prev}}}${{A{prev}}}\n", prev = i - 1));
    }
    env.push_str(&format!("A1=${{A{}}}\n", n - 1));
    vec![(".env".to_string(), env)]
}

/// `${a:-${a:-...}}` nested n deep in a compose value.
fn nested_compose_defaults(n: usize) -> String {
    format!(
        "services:\n  t:\n    image: {IMAGE}\n    gpus: all\n    shm_size: \"{}8gb{}\"\n",
        "${a:-".repeat(n),
        "}".repeat(n)
    )
}

const IMAGE: &str = "nvcr.io/nvidia/pytorch:24.01-py3";

/// `x{i}: &m{i}` merging the previous anchor twice: a chain of merges.
fn merge_chain(n: usize) -> String {
    let mut s = String::from("x-0: &m0\n  ipc: host\n");
    for i in 1..n {
        s.push_str(&format!(
            "x-{i}: &m{i}\n  <<: [*m{prev}, *m{prev}]\n  k{i}: v\n",
            prev = i - 1
        ));
    }
    s.push_str(&format!(
        "services:\n  trainer:\n    <<: *m{}\n    image: {IMAGE}\n    gpus: all\n",
        n - 1
    ));
    s
}

/// One anchor read by many aliases across many services.
fn alias_fan(n: usize) -> String {
    let mut s = format!(
        "x-gpu: &gpu\n  image: {IMAGE}\n  shm_size: 1gb\n  deploy: {{resources: {{reservations: {{devices: [{{driver: nvidia, count: all, capabilities: [gpu]}}]}}}}}}\nservices:\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "  s{i}:\n    <<: *gpu\n    environment: {{RANK: \"{i}\"}}\n"
        ));
    }
    s
}

/// Flow collections nested `n` deep under a service.
fn deep_flow(n: usize) -> String {
    format!(
        "services:\n  trainer:\n    image: {IMAGE}\n    gpus: all\n    labels: {}{}\n",
        "[".repeat(n),
        "]".repeat(n)
    )
}

/// One very long line: a command of `n` words.
fn long_line(n: usize) -> String {
    let words: Vec<String> = (0..n).map(|i| format!("--flag{i}=value{i}")).collect();
    format!(
        "services:\n  trainer:\n    image: {IMAGE}\n    gpus: all\n    command: torchrun --nproc_per_node 8 train.py {}\n",
        words.join(" ")
    )
}

/// One mapping with many keys: `n` services with nothing to report.
fn many_keys(n: usize) -> String {
    let mut s = String::from("services:\n");
    for i in 0..n {
        s.push_str(&format!("  s{i}:\n    image: nginx:1.27\n"));
    }
    s
}

/// One mapping with many keys: `n` GPU services, each with a finding and
/// a fix (whose checks look at the other services).
fn many_services(n: usize) -> String {
    let mut s = String::from("services:\n");
    for i in 0..n {
        s.push_str(&format!("  s{i}:\n    image: {IMAGE}\n    gpus: all\n"));
    }
    s
}

/// A Kubernetes stream of `n` documents, each a GPU Job.
fn many_documents(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train-{i}\nspec:\n  template:\n    spec:\n      containers:\n        - name: trainer\n          image: {IMAGE}\n          command: [torchrun, --nproc_per_node=2, train.py]\n          resources:\n            limits:\n              nvidia.com/gpu: 2\n"
        ));
    }
    s
}

/// A script of `n` `docker run` lines.
fn many_docker_runs(n: usize) -> String {
    let mut s = String::from("#!/bin/bash\n");
    for i in 0..n {
        s.push_str(&format!(
            "docker run --gpus all --name job{i} {IMAGE} torchrun --nproc_per_node=8 train.py\n"
        ));
    }
    s
}

/// A `devcontainer.json` whose object has `n` members (and `n` `runArgs`).
fn devcontainer_members(n: usize) -> String {
    let mut s = String::from(
        "{\n  // many members\n  \"image\": \"x\",\n  \"runArgs\": [\"--gpus\", \"all\"",
    );
    for i in 0..n {
        s.push_str(&format!(", \"-e\", \"K{i}=v\""));
    }
    s.push_str("],\n");
    for i in 0..n {
        s.push_str(&format!("  \"k{i}\": {{\"a\": [{i}, true, null]}},\n"));
    }
    s.push_str("}\n");
    s
}

/// `ARG A{i}=${{A{i-1}}}${{A{i-1}}}`: each line doubles the value, and a
/// `FROM` uses the last one (2^n bytes if expanded in full).
fn arg_doubling(n: usize) -> String {
    let mut s = String::from("ARG A0=nvcr.io\n");
    for i in 1..n {
        s.push_str(&format!(
            "ARG A{i}=${{A{prev}}}${{A{prev}}}\n",
            prev = i - 1
        ));
    }
    s.push_str(&format!(
        "FROM ${{A{}}}/nvidia/pytorch:24.01-py3\nRUN pip install torch\n",
        n - 1
    ));
    s
}

/// `FROM ${a:-${a:-...}}` nested `n` deep.
fn nested_defaults(n: usize) -> String {
    format!(
        "FROM {}{IMAGE}{}\nRUN pip install torch\n",
        "${a:-".repeat(n),
        "}".repeat(n)
    )
}

const FAMILIES: &[Family] = &[
    Family {
        name: "merge-chain",
        file: "compose.yaml",
        base: 250,
        make: merge_chain,
        beside: nothing_beside,
    },
    Family {
        name: "alias-fan",
        file: "compose.yaml",
        base: 250,
        make: alias_fan,
        beside: nothing_beside,
    },
    Family {
        name: "deep-flow",
        file: "compose.yaml",
        base: 250,
        make: deep_flow,
        beside: nothing_beside,
    },
    Family {
        name: "long-line",
        file: "compose.yaml",
        base: 250,
        make: long_line,
        beside: nothing_beside,
    },
    Family {
        name: "keys",
        file: "compose.yaml",
        base: 2000,
        make: many_keys,
        beside: nothing_beside,
    },
    Family {
        name: "services",
        file: "compose.yaml",
        base: 1000,
        make: many_services,
        beside: nothing_beside,
    },
    Family {
        name: "k8s-documents",
        file: "k8s/jobs.yaml",
        base: 250,
        make: many_documents,
        beside: nothing_beside,
    },
    Family {
        name: "docker-runs",
        file: "run.sh",
        base: 1000,
        make: many_docker_runs,
        beside: nothing_beside,
    },
    Family {
        name: "arg-doubling",
        file: "Dockerfile",
        base: 32,
        make: arg_doubling,
        beside: nothing_beside,
    },
    Family {
        name: "nested-default",
        file: "Dockerfile",
        base: 1000,
        make: nested_defaults,
        beside: nothing_beside,
    },
    Family {
        name: "include-lattice",
        file: "compose.yaml",
        base: 4,
        make: include_diamond,
        beside: include_diamond_files,
    },
    Family {
        name: "env-doubling",
        file: "compose.yaml",
        base: 64,
        make: dotenv_doubling,
        beside: dotenv_doubling_files,
    },
    Family {
        name: "devcontainer",
        file: ".devcontainer/devcontainer.json",
        base: 2000,
        make: devcontainer_members,
        beside: nothing_beside,
    },
    Family {
        name: "env-nesting",
        file: "compose.yaml",
        base: 2000,
        make: nested_compose_defaults,
        beside: nothing_beside,
    },
];

const FACTORS: [usize; 5] = [1, 2, 4, 8, 16];

fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap()
}

/// The least-squares slope of log(time) against log(units).
fn growth_exponent(points: &[(usize, Duration)]) -> f64 {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|&(units, time)| ((units as f64).ln(), time.as_secs_f64().max(1e-9).ln()))
        .collect();
    let n = xy.len() as f64;
    let (mean_x, mean_y) = (
        xy.iter().map(|p| p.0).sum::<f64>() / n,
        xy.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let covariance: f64 = xy.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let variance: f64 = xy.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    covariance / variance
}

fn main() {
    // `cargo test --all-targets` runs benches with no `--bench` argument.
    let benching = std::env::args().any(|a| a == "--bench");
    let (scale, runs) = if benching { (1.0, 5) } else { (0.05, 1) };
    let scale = std::env::var("GPULINT_BENCH_SCALE")
        .ok()
        .map_or(scale, |v| {
            v.parse().expect("GPULINT_BENCH_SCALE is a number")
        });
    let bound: Option<f64> = std::env::var("GPULINT_BENCH_EXPONENT")
        .ok()
        .map(|v| v.parse().expect("GPULINT_BENCH_EXPONENT is a number"));
    let only = std::env::var("GPULINT_BENCH_ONLY").ok();
    let mut config = Config::default();
    let every: Vec<String> = gpulint::rules::RULES
        .iter()
        .map(|r| r.code.to_string())
        .collect();
    config.set_selection(&every, &[]);
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    println!(
        "{:<15} {:>8} {:>10} {:>12} {:>14}",
        "family", "units", "bytes", "time", "ns per unit"
    );
    for family in FAMILIES {
        if only.as_deref().is_some_and(|only| only != family.name) {
            continue;
        }
        let base = ((family.base as f64 * scale).round() as usize).max(2);
        let mut points = Vec::new();
        for factor in FACTORS {
            let units = base * factor;
            let text = (family.make)(units);
            let dir = tempfile::tempdir().expect("a temporary directory");
            for (name, content) in (family.beside)(units) {
                std::fs::write(dir.path().join(name), content).expect("written");
            }
            let path = dir.path().join(family.file);
            std::fs::create_dir_all(path.parent().expect("a directory")).expect("created");
            std::fs::write(&path, &text).expect("written");
            // Every run reads the project's other files, as a command does.
            let time = best_of(runs, || {
                black_box(lint_text(black_box(&text), &path, &config).ok());
            });
            points.push((units, time));
            println!(
                "{:<15} {:>8} {:>10} {:>12.2?} {:>14.0}",
                family.name,
                units,
                text.len(),
                time,
                time.as_nanos() as f64 / units as f64
            );
        }
        let exponent = growth_exponent(&points);
        summary.push(format!(
            "| {} | {}..{} | {:.2?}..{:.2?} | {exponent:.2} |",
            family.name, points[0].0, points[4].0, points[0].1, points[4].1
        ));
        if let Some(bound) = bound
            && exponent > bound
        {
            failures.push(format!("{}: exponent {exponent:.2} > {bound}", family.name));
        }
    }
    println!("\n| family | units (1x..16x) | time (1x..16x) | growth exponent |");
    println!("|---|---|---|---|");
    for line in &summary {
        println!("{line}");
    }
    assert!(
        failures.is_empty(),
        "super-linear lint time: {}",
        failures.join(", ")
    );
}

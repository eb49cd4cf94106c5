//! Lint time against input size for hostile shapes: it must grow linearly.
//!
//! Each shape is generated at n, 2n, 4n and 8n units and linted (best of a
//! few runs, the full rule set, as `check --select ALL` would); the report
//! gives the time per unit at each size and the ratio of the largest to the
//! smallest. A linear lint keeps that ratio near 1; the merge-key chain that
//! once doubled per level would be astronomically slow at these sizes.
//!
//! `cargo bench --bench adversarial` prints the table. Under `cargo test`
//! (`--all-targets`) it runs small sizes once as a smoke test; set
//! `GPULINT_BENCH_RATIO=<max>` to make it fail when a shape's per-unit time
//! at 8n exceeds `max` times that at n (CI uses a generous bound: the point
//! is to catch super-linear growth, not to time the machine).

use gpulint::engine::config::Config;
use gpulint::engine::lint_text;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// A named generator: units → YAML text and the file name it is linted as.
struct Shape {
    name: &'static str,
    file: &'static str,
    make: fn(usize) -> String,
}

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
        "services:\n  trainer:\n    <<: *m{}\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n",
        n - 1
    ));
    s
}

/// One anchor read by many aliases across many services.
fn alias_fan(n: usize) -> String {
    let mut s = String::from(
        "x-gpu: &gpu\n  image: nvcr.io/nvidia/pytorch:24.01-py3\n  shm_size: 1gb\n  deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}\nservices:\n",
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
        "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    labels: {}{}\n",
        "[".repeat(n),
        "]".repeat(n)
    )
}

/// One very long line: a command of `n` words.
fn long_line(n: usize) -> String {
    let words: Vec<String> = (0..n).map(|i| format!("--flag{i}=value{i}")).collect();
    format!(
        "services:\n  trainer:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    command: torchrun --nproc_per_node 8 train.py {}\n",
        words.join(" ")
    )
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "merge-chain",
        file: "compose.yaml",
        make: merge_chain,
    },
    Shape {
        name: "alias-fan",
        file: "compose.yaml",
        make: alias_fan,
    },
    Shape {
        name: "deep-flow",
        file: "compose.yaml",
        make: deep_flow,
    },
    Shape {
        name: "long-line",
        file: "compose.yaml",
        make: long_line,
    },
];

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

fn main() {
    // `cargo test --all-targets` runs benches with no `--bench` argument.
    let benching = std::env::args().any(|a| a == "--bench");
    let (base, runs) = if benching { (250, 7) } else { (25, 1) };
    let base = std::env::var("GPULINT_BENCH_BASE")
        .ok()
        .map_or(base, |v| v.parse().expect("GPULINT_BENCH_BASE is a number"));
    let bound: Option<f64> = std::env::var("GPULINT_BENCH_RATIO")
        .ok()
        .map(|v| v.parse().expect("GPULINT_BENCH_RATIO is a number"));
    let mut config = Config::default();
    let every: Vec<String> = gpulint::rules::RULES
        .iter()
        .map(|r| r.code.to_string())
        .collect();
    config.set_selection(&every, &[]);
    let mut failures = Vec::new();
    println!(
        "{:<12} {:>8} {:>10} {:>12} {:>14}",
        "shape", "units", "bytes", "time", "ns per unit"
    );
    for shape in SHAPES {
        let path = Path::new(shape.file);
        let mut per_unit = Vec::new();
        for factor in [1, 2, 4, 8] {
            let units = base * factor;
            let text = (shape.make)(units);
            let time = best_of(runs, || {
                black_box(lint_text(black_box(&text), path, &config).ok());
            });
            let ns = time.as_nanos() as f64 / units as f64;
            per_unit.push(ns);
            println!(
                "{:<12} {:>8} {:>10} {:>12.2?} {:>14.0}",
                shape.name,
                units,
                text.len(),
                time,
                ns
            );
        }
        let ratio = per_unit[3] / per_unit[0];
        println!(
            "{:<12} per-unit time at 8x the size: {ratio:.2}x that at 1x (1.00 is linear)",
            shape.name
        );
        if let Some(bound) = bound
            && ratio > bound
        {
            failures.push(format!("{}: {ratio:.2}x > {bound}", shape.name));
        }
    }
    assert!(
        failures.is_empty(),
        "super-linear lint time: {}",
        failures.join(", ")
    );
}

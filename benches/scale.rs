//! How the cost of one file grows with its size, for `check` and for
//! `--diff` (the fix loop and the patch), on shapes where every unit has
//! findings with safe fixes:
//!
//! - `compose-gpu`: services that each reserve all GPUs for `torchrun` and
//!   need two safe fixes (SHM001's `shm_size`, ULIM001's `memlock`);
//! - `compose-anchor`: services that each merge one GPU anchor (`<<: *gpu`)
//!   and need the same two fixes;
//! - `k8s-pods`: a stream of GPU pods, each needing K8S004's /dev/shm volume.
//!
//! Each shape is timed at doubling sizes (the best of a few runs, in CPU
//! time of the thread on Linux); the report gives the time at each size
//! and the growth exponent, the least-squares
//! slope of log time against log size (1 is linear, 2 quadratic), and for
//! `--diff` its cost against `check` on the same text at `RATIO_AT` units.
//!
//! `cargo bench --bench scale` prints the table. Under `cargo test`
//! (`--all-targets`) it runs small sizes once as a smoke test, checking that
//! the fix loop fixes every finding. `GPULINT_BENCH_EXPONENT=<max>` makes it
//! fail when a growth exponent exceeds `max`, and
//! `GPULINT_BENCH_DIFF_RATIO=<max>` when `--diff` costs more than `max`
//! times `check` (the acceptance of issue 30: 1.2 and 10).

use gpulint::engine::config::Config;
use gpulint::engine::fix::{FixMode, fix_text_in, unified_diff};
use gpulint::engine::{FileReport, Session};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// A named generator: units → text, the file name it is linted as, and how
/// many safe fixes each unit needs.
struct Shape {
    name: &'static str,
    file: &'static str,
    fixes_per_unit: usize,
    make: fn(usize) -> String,
}

const GPU_DEVICES: &str = "    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: all\n              capabilities: [gpu]\n";

fn compose_gpu(n: usize) -> String {
    let mut s = String::from("services:\n");
    for i in 0..n {
        s.push_str(&format!(
            "  s{i}:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: torchrun --nproc_per_node 8 train.py\n{GPU_DEVICES}"
        ));
    }
    s
}

fn compose_anchor(n: usize) -> String {
    let mut s = String::from(
        "x-gpu: &gpu\n  image: nvcr.io/nvidia/pytorch:24.01-py3\n  command: torchrun --nproc_per_node 8 train.py\n  deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}\nservices:\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "  s{i}:\n    <<: *gpu\n    environment: {{RANK: \"{i}\"}}\n"
        ));
    }
    s
}

fn k8s_pods(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\nspec:\n  containers:\n  - name: t\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    command: [torchrun, --nproc_per_node, \"8\", train.py]\n    resources:\n      limits:\n        nvidia.com/gpu: 8\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "compose-gpu",
        file: "compose.yaml",
        fixes_per_unit: 2,
        make: compose_gpu,
    },
    Shape {
        name: "compose-anchor",
        file: "compose.yaml",
        fixes_per_unit: 2,
        make: compose_anchor,
    },
    Shape {
        name: "k8s-pods",
        file: "pods.yaml",
        fixes_per_unit: 1,
        make: k8s_pods,
    },
];

/// Where `--diff` is compared with `check` (the acceptance's 400 services).
const RATIO_AT: usize = 400;

/// The CPU time this thread has used: on a shared machine, other
/// processes move wall-clock times by 2x and more, which an exponent fitted
/// over four sizes cannot tell from growth.
#[cfg(target_os = "linux")]
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a pointer to a timespec to fill.
    let done = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(done, 0, "clock_gettime");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Elsewhere, wall-clock time.
#[cfg(not(target_os = "linux"))]
fn thread_cpu_time() -> Duration {
    use std::time::Instant;
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = thread_cpu_time();
            f();
            thread_cpu_time() - start
        })
        .min()
        .unwrap()
}

/// The least-squares slope of log time against log size.
fn exponent(points: &[(usize, Duration)]) -> f64 {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .map(|&(n, t)| ((n as f64).ln(), t.as_secs_f64().max(1e-9).ln()))
        .collect();
    let count = logs.len() as f64;
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / count;
    let covariance: f64 = logs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let variance: f64 = logs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    covariance / variance
}

/// `check` on a text, as the command does it without reading the file.
fn check(session: &Session, text: &str, path: &Path, config: &Config) -> FileReport {
    session.check_text(path.to_path_buf(), text.to_string(), config)
}

/// `--diff` on a text: the fix loop and the patch; the number of fixes applied.
fn diff(session: &Session, text: &str, path: &Path, config: &Config) -> usize {
    let mode = FixMode {
        unsafe_fixes: false,
    };
    let outcome = fix_text_in(session, text, path, config, mode).expect("the text lints");
    black_box(unified_diff("compose.yaml", text, &outcome.fixed_text));
    outcome.applied.len()
}

fn env_bound(name: &str) -> Option<f64> {
    std::env::var(name)
        .ok()
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} is a number")))
}

fn main() {
    // `cargo test --all-targets` runs benches with no `--bench` argument.
    let benching = std::env::args().any(|a| a == "--bench");
    let (check_sizes, diff_sizes, runs): (&[usize], &[usize], usize) = if benching {
        (&[400, 800, 1600, 3200], &[50, 100, 200, 400, 800], 5)
    } else {
        (&[20, 40], &[5, 10], 1)
    };
    let max_exponent = env_bound("GPULINT_BENCH_EXPONENT");
    let max_ratio = env_bound("GPULINT_BENCH_DIFF_RATIO");
    let config = Config::default();
    let mut failures = Vec::new();
    println!(
        "{:<15} {:<6} {:>6} {:>9} {:>12}",
        "shape", "what", "units", "fixes", "time"
    );
    for shape in SHAPES {
        let path = Path::new(shape.file);
        let session = Session::on_disk();
        let mut check_points = Vec::new();
        for &units in check_sizes {
            let text = (shape.make)(units);
            let report = check(&session, &text, path, &config);
            assert!(report.error.is_none(), "{:?}", report.error);
            let fixable = report
                .diagnostics
                .iter()
                .filter(|d| d.fix.is_some())
                .count();
            assert_eq!(fixable, units * shape.fixes_per_unit, "{}", shape.name);
            let time = best_of(runs, || {
                black_box(check(&session, black_box(&text), path, &config));
            });
            println!(
                "{:<15} {:<6} {:>6} {:>9} {:>12.2?}",
                shape.name, "check", units, fixable, time
            );
            check_points.push((units, time));
        }
        let mut diff_points = Vec::new();
        let mut ratio = None;
        for &units in diff_sizes {
            let text = (shape.make)(units);
            let applied = diff(&session, &text, path, &config);
            assert_eq!(
                applied,
                units * shape.fixes_per_unit,
                "{}: every safe fix is applied",
                shape.name
            );
            let time = best_of(runs, || {
                black_box(diff(&session, black_box(&text), path, &config));
            });
            println!(
                "{:<15} {:<6} {:>6} {:>9} {:>12.2?}",
                shape.name, "diff", units, applied, time
            );
            if units == RATIO_AT {
                let check_time = best_of(runs, || {
                    black_box(check(&session, black_box(&text), path, &config));
                });
                ratio = Some(time.as_secs_f64() / check_time.as_secs_f64());
            }
            diff_points.push((units, time));
        }
        let (check_exponent, diff_exponent) = (exponent(&check_points), exponent(&diff_points));
        print!(
            "{:<15} growth exponent: check {check_exponent:.2}, diff {diff_exponent:.2}",
            shape.name
        );
        if let Some(ratio) = ratio {
            print!("; diff/check at {RATIO_AT} units: {ratio:.1}x");
        }
        println!();
        for (what, value) in [("check", check_exponent), ("diff", diff_exponent)] {
            if let Some(max) = max_exponent
                && value > max
            {
                failures.push(format!(
                    "{}: {what} grows with exponent {value:.2} (max {max})",
                    shape.name
                ));
            }
        }
        if let (Some(max), Some(ratio)) = (max_ratio, ratio)
            && ratio > max
        {
            failures.push(format!(
                "{}: --diff costs {ratio:.1}x check at {RATIO_AT} units (max {max})",
                shape.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

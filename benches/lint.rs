//! Parse, lint and fix timings, on files of the seeded benchmark tree
//! (`benches/tree.py`, written to a temporary directory first):
//!
//! - `single/*`: one typical file of each kind, as pre-commit and editors
//!   see it: parse only, the full lint (with its cross-file reads: the
//!   compose service's Dockerfile), and the fix.
//! - `tree/*`: every file of a tree of `GPULINT_BENCH_SERVICES` services
//!   (default 200, so 600 files), on one thread: reading and parsing only,
//!   against reading and the full lint as `check` does it (a compose file
//!   reuses the parse of the Dockerfile it builds, linted just before, after
//!   one `stat` shows it unchanged; it looks for its override files). Their
//!   ratio says what linting costs on top of parsing; `tree/lint-in-memory`
//!   leaves the reading of the linted files out.
//! - `tree-parallel/*`: the same on all cores the way `gpulint check` works
//!   (discovery, then a parallel read and parse, or read and lint of every
//!   file), without the report.
//!
//! `cargo bench --bench lint`. Under `cargo test` each runs once, as a
//! smoke test. `benches/compare.py` times the whole command against peers.

use criterion::{Criterion, criterion_group, criterion_main};

use gpulint::engine::config::Config;
use gpulint::engine::fix::{FixMode, fix_text};
use gpulint::engine::{FileKind, Scope, Session, lint_text, read_source, read_source_stamped};
use gpulint::syntax::dockerfile::Dockerfile;
use gpulint::syntax::yaml::Yaml;
use gpulint::vfs::Stamp;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// The generated tree, written once per run.
fn tree() -> &'static Path {
    static TREE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_dir, root) = TREE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path().join("tree");
        let services = std::env::var("GPULINT_BENCH_SERVICES").unwrap_or_else(|_| "200".into());
        let status = Command::new("python3")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tree.py"))
            .arg(&root)
            .args(["--services", &services])
            .status()
            .expect("python3 runs benches/tree.py");
        assert!(status.success(), "benches/tree.py failed");
        (dir, root)
    });
    root
}

/// Every file of the tree, in a stable order.
fn tree_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for service in std::fs::read_dir(tree()).expect("tree") {
        let service = service.expect("entry").path();
        for name in ["compose.yaml", "Dockerfile", "deploy.yaml"] {
            files.push(service.join(name));
        }
    }
    files.sort();
    files
}

fn read(path: &Path) -> String {
    read_source(path).expect("generated file")
}

/// Only what every lint must do first: turning the text into a tree.
fn parse(path: &Path, text: &str) -> usize {
    match FileKind::of(path) {
        FileKind::Dockerfile => Dockerfile::parse(text).instructions.len(),
        FileKind::Yaml => Yaml::parse(text).map_or(0, |yaml| yaml.documents.len()),
        FileKind::Script(_) => unreachable!("the tree has no scripts"),
    }
}

fn single(c: &mut Criterion) {
    let config = Config::default();
    let service = tree().join("svc-00000");
    for name in ["compose.yaml", "Dockerfile", "deploy.yaml"] {
        let path = service.join(name);
        let text = std::fs::read_to_string(&path).expect("generated file");
        let mut group = c.benchmark_group(format!("single/{name}"));
        group.bench_function("parse", |b| b.iter(|| parse(&path, black_box(&text))));
        group.bench_function("lint", |b| {
            b.iter(|| lint_text(black_box(&text), &path, &config).expect("lints"))
        });
        group.bench_function("fix", |b| {
            b.iter(|| {
                fix_text(
                    black_box(&text),
                    &path,
                    &config,
                    FixMode {
                        unsafe_fixes: false,
                    },
                )
                .expect("fixes")
            })
        });
        group.finish();
    }
}

fn whole_tree(c: &mut Criterion) {
    let config = Config::default();
    let files = tree_files();
    // Each text with the stamp of the file it was read from, so that the
    // in-memory lint reuses a built Dockerfile's parse as `check` does.
    let texts: Vec<(String, Stamp)> = files
        .iter()
        .map(|p| read_source_stamped(p).expect("generated file"))
        .collect();
    let mut group = c.benchmark_group("tree");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("parse", |b| {
        b.iter(|| files.iter().map(|p| parse(p, &read(p))).sum::<usize>())
    });
    group.bench_function("lint", |b| {
        b.iter(|| {
            // One session per run, as `gpulint check` has.
            let session = Session::on_disk();
            files
                .iter()
                .map(|p| session.check_file(p.clone(), &config).diagnostics.len())
                .sum::<usize>()
        })
    });
    group.bench_function("parse-in-memory", |b| {
        b.iter(|| {
            files
                .iter()
                .zip(&texts)
                .map(|(p, (t, _))| parse(p, t))
                .sum::<usize>()
        })
    });
    group.bench_function("lint-in-memory", |b| {
        b.iter(|| {
            let session = Session::on_disk();
            files
                .iter()
                .zip(&texts)
                .map(|(p, (t, stamp))| {
                    let lint = session.lint_in_scope(t, p, Some(*stamp), &config, Scope::Any);
                    lint.expect("lints").unwrap_or_default().len()
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

fn whole_tree_parallel(c: &mut Criterion) {
    use gpulint::engine::discover::{ConfigResolver, discover};
    use rayon::prelude::*;
    let root = vec![tree().to_path_buf()];
    let mut group = c.benchmark_group("tree-parallel");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("parse", |b| {
        b.iter(|| {
            let resolver = ConfigResolver::new(None, None, Vec::new());
            let (targets, _) = discover(&root, &resolver);
            targets
                .par_iter()
                .map(|t| parse(&t.path, &read(&t.path)))
                .sum::<usize>()
        })
    });
    group.bench_function("lint", |b| {
        b.iter(|| {
            let resolver = ConfigResolver::new(None, None, Vec::new());
            let (targets, _) = discover(&root, &resolver);
            let session = Session::on_disk();
            targets
                .par_iter()
                .map(|t| {
                    let config = resolver.for_file(&t.path).expect("config");
                    session
                        .check_file(t.path.clone(), &config)
                        .diagnostics
                        .len()
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, single, whole_tree, whole_tree_parallel);
criterion_main!(benches);

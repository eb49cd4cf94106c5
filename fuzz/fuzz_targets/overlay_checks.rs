//! The kustomize target's checks, shared with tests/it/fuzz_regressions.rs.
//!
//! The input is a tree of files in memory: text up to the first line
//! `==> NAME` is `overlay/kustomization.yaml`, and each `==> NAME` line
//! starts the file NAME (a path under the tree's root; `..` and absolute
//! names stay inside it). The overlay is built, linted and inspected as
//! `gpulint check` and `inspect` do, and every file is written again as a
//! build writes its objects. None of it may panic or hang, a finding must
//! lie inside the file it names, and a stream written again must read back
//! as YAML.

use gpulint::engine::Session;
use gpulint::engine::config::Config;
use gpulint::project::kustomize;
use gpulint::vfs::MemoryFs;
use std::path::PathBuf;

const ROOT: &str = "/nonexistent-gpulint-fuzz/tree";

fn files(text: &str) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut name = "overlay/kustomization.yaml".to_string();
    let mut body = String::new();
    for line in text.split_inclusive('\n') {
        if let Some(next) = line.strip_prefix("==> ") {
            files.push((inside(&name), std::mem::take(&mut body)));
            name = next.trim().to_string();
        } else {
            body.push_str(line);
        }
    }
    files.push((inside(&name), body));
    files
}

/// `name` under the root, whatever it says.
fn inside(name: &str) -> PathBuf {
    let mut path = PathBuf::from(ROOT);
    for part in name.split('/') {
        if !matches!(part, "" | "." | "..") {
            path.push(part);
        }
    }
    path
}

pub fn run(data: &[u8], config: &Config) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let files = files(text);
    for (_, body) in &files {
        if let Ok(again) = kustomize::restream(body) {
            gpulint::syntax::yaml::Yaml::parse(&again)
                .unwrap_or_else(|e| panic!("a stream written again is not YAML: {e:?}\n{again}"));
        }
    }
    let session = Session::new(MemoryFs::new(files));
    let kustomization = PathBuf::from(ROOT).join("overlay/kustomization.yaml");
    if let Ok(lint) = session.lint_overlay(&kustomization, config) {
        for (source, diagnostics) in &lint.findings {
            for d in diagnostics {
                assert!(
                    (d.range.end as usize) <= source.text.len()
                        && source.text.is_char_boundary(d.range.start as usize)
                        && source.text.is_char_boundary(d.range.end as usize),
                    "{} is not a place in {}",
                    d.range.start,
                    source.path.display()
                );
            }
        }
    }
    let _ = session.inspect_overlay(&kustomization, config);
}

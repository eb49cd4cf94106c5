//! Property test: fixes on generated compose files of every style (indent
//! width, flow or block, indented or flush sequences, comments, anchors and
//! merges, CRLF, BOM, with or without a final newline) always verify, leave
//! the file parseable, remove the findings they fix, add none, and a second
//! run changes nothing.

use crate::common;

use gpulint::engine::config::Config;
use gpulint::engine::fix::{FixMode, fix_text};
use gpulint::engine::lint_text;
use gpulint::syntax::yaml::Yaml;
use proptest::prelude::*;
use std::path::Path;

/// A small deterministic generator driven by proptest's seed.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.below(options.len() as u64) as usize]
    }
}

struct Style {
    step: usize,
    indent_seq: bool,
}

fn pad(n: usize) -> String {
    " ".repeat(n)
}

fn comment(g: &mut Gen) -> &'static str {
    if g.chance(25) { "  # note" } else { "" }
}

/// One service's lines at column `col`.
fn service(g: &mut Gen, s: &Style, name: &str, col: usize, anchor: bool) -> String {
    let k = pad(col + s.step);
    let mut out = format!("{}{name}:{}\n", pad(col), comment(g));
    if anchor && g.chance(50) {
        out.push_str(&format!("{k}<<: *gpu\n"));
    }
    if g.chance(20) {
        // A whole service in flow style.
        let gpu = g.pick(&["gpus: all, ", "runtime: nvidia, ", ""]);
        let shm = g.pick(&["shm_size: 64m, ", "", "ipc: host, shm_size: 1g, "]);
        return format!(
            "{}{name}: {{image: \"x/y:1\", {gpu}{shm}command: torchrun train.py}}\n",
            pad(col)
        );
    }
    out.push_str(&format!(
        "{k}image: {}{}\n",
        g.pick(&[
            "nvcr.io/nvidia/pytorch:24.01-py3",
            "'my/app:1'",
            "\"my/app\""
        ]),
        comment(g)
    ));
    if g.chance(50) {
        out.push_str(&format!(
            "{k}command: {}\n",
            g.pick(&[
                "torchrun --nproc_per_node=4 train.py",
                "[\"python\", \"serve.py\"]",
                "deepspeed train.py"
            ])
        ));
    }
    if g.chance(30) {
        out.push_str(&format!("{k}# a comment line\n"));
    }
    match g.below(5) {
        0 => out.push_str(&format!("{k}gpus: all\n")),
        1 => out.push_str(&format!("{k}runtime: nvidia\n")),
        2 => {
            let dash = if s.indent_seq { pad(col + 5 * s.step) } else { pad(col + 4 * s.step) };
            let count = g.pick(&["count: all", "count: 2", "device_ids: ['0', '1']", "count: 1\n  device_ids: ['0']"]);
            out.push_str(&format!(
                "{k}deploy:\n{}resources:\n{}reservations:\n{}devices:\n{dash}- driver: nvidia\n",
                pad(col + 2 * s.step),
                pad(col + 3 * s.step),
                pad(col + 4 * s.step)
            ));
            for line in count.split('\n') {
                let line = line.trim_start();
                out.push_str(&format!("{}{line}\n", pad(dash.len() + 2)));
            }
            if g.chance(50) {
                out.push_str(&format!("{}capabilities: [{}]\n", pad(dash.len() + 2), g.pick(&["gpu", "gpus", "compute, utility"])));
            }
        }
        3 => out.push_str(&format!("{k}deploy: {{resources: {{reservations: {{devices: [{{driver: nvidia, count: all}}]}}}}}}\n")),
        _ => {}
    }
    match g.below(6) {
        0 => out.push_str(&format!(
            "{k}shm_size: {}\n",
            g.pick(&["64m", "'256mb'", "0", "\"1gb\""])
        )),
        1 => out.push_str(&format!(
            "{k}ipc: {}\n",
            g.pick(&["host", "none", "shareable"])
        )),
        2 => out.push_str(&format!("{k}ipc: host\n{k}shm_size: 2g\n")),
        _ => {}
    }
    if g.chance(40) {
        if g.chance(50) {
            out.push_str(&format!("{k}environment:\n"));
            for var in [
                "NCCL_P2P_DISABLE: \"1\"",
                "NCCL_DEBUG: INFO",
                "NCCL_SHM_DISABLE: '1'",
                "NCCL_IB_HCA: mlx5_0",
            ] {
                if g.chance(50) {
                    out.push_str(&format!("{}{var}\n", pad(col + 2 * s.step)));
                }
            }
            out.push_str(&format!("{}KEEP: x\n", pad(col + 2 * s.step)));
        } else {
            let dash = if s.indent_seq {
                pad(col + 2 * s.step)
            } else {
                k.clone()
            };
            out.push_str(&format!(
                "{k}environment:\n{dash}- NCCL_ALGO=Ring{}\n{dash}- NCCL_P2P_LEVEL=LOC\n",
                comment(g)
            ));
        }
    }
    if g.chance(30) {
        out.push_str(&format!(
            "{k}ulimits:\n{}memlock: {}\n",
            pad(col + 2 * s.step),
            g.pick(&["65536", "-1", "{soft: 1, hard: 2}"])
        ));
        if g.chance(50) {
            out.push_str(&format!("{}stack: -1\n", pad(col + 2 * s.step)));
        }
    }
    out
}

fn compose_file(seed: u64) -> String {
    let mut g = Gen(seed | 1);
    let s = Style {
        step: 2 + g.below(3) as usize,
        indent_seq: g.chance(60),
    };
    let mut out = String::new();
    if g.chance(10) {
        out.push('\u{feff}');
    }
    if g.chance(30) {
        out.push_str("# generated\n");
    }
    let anchor = g.chance(40);
    if anchor {
        out.push_str(&format!(
            "x-gpu: &gpu\n{}deploy:\n{}resources:\n{}reservations:\n{}devices: [{{driver: nvidia, count: all}}]\n",
            pad(s.step),
            pad(2 * s.step),
            pad(3 * s.step),
            pad(4 * s.step)
        ));
    }
    out.push_str("services:\n");
    for i in 0..1 + g.below(3) {
        out.push_str(&service(&mut g, &s, &format!("svc{i}"), s.step, anchor));
        if g.chance(30) {
            out.push('\n');
        }
    }
    if g.chance(50) {
        out = out.replace('\n', "\r\n");
    }
    if g.chance(20) {
        while out.ends_with('\n') || out.ends_with('\r') {
            out.pop();
        }
    }
    out
}

fn findings(text: &str, config: &Config) -> Vec<String> {
    let mut list: Vec<String> = lint_text(text, Path::new("compose.yaml"), config)
        .unwrap()
        .iter()
        .map(|d| d.code.to_string())
        .collect();
    list.sort();
    list
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::property_cases()))]

    #[test]
    fn fixes_on_generated_compose_files_verify_and_settle(seed in any::<u64>()) {
        let text = compose_file(seed);
        let config = Config::default();
        // Generated files are valid YAML by construction; anything else is a generator bug.
        prop_assume!(Yaml::parse(&text).is_ok());
        let mode = FixMode { unsafe_fixes: true };
        let outcome = fix_text(&text, Path::new("compose.yaml"), &config, mode).unwrap();
        prop_assert!(outcome.failed.is_empty(), "failed fixes {:?} on\n{}", outcome.failed, text);
        prop_assert!(Yaml::parse(&outcome.fixed_text).is_ok());
        // No finding appears that was not there (counted per rule).
        let before = findings(&text, &config);
        let after = findings(&outcome.fixed_text, &config);
        for code in &after {
            let was = before.iter().filter(|c| *c == code).count();
            let now = after.iter().filter(|c| *c == code).count();
            prop_assert!(now <= was, "{} went from {} to {} on\n{}\n---\n{}", code, was, now, text, outcome.fixed_text);
        }
        // Nothing fixable is left, and a second run changes nothing.
        prop_assert!(
            outcome.remaining.iter().all(|d| d.fix.as_ref().is_none_or(|f| !mode.applies(f))),
            "fixable findings left in\n{}", outcome.fixed_text
        );
        let again = fix_text(&outcome.fixed_text, Path::new("compose.yaml"), &config, mode).unwrap();
        prop_assert_eq!(&again.fixed_text, &outcome.fixed_text);
        // Line endings and the BOM are the file's own.
        if text.contains("\r\n") {
            prop_assert!(!outcome.fixed_text.replace("\r\n", "").contains('\n'));
        }
        prop_assert_eq!(text.starts_with('\u{feff}'), outcome.fixed_text.starts_with('\u{feff}'));
    }
}

#[test]
fn the_generator_makes_valid_yaml_that_gets_fixed() {
    // Guards against a generator that silently produces nothing to fix.
    let mut parsed = 0;
    let mut fixed = 0;
    for seed in 0..200u64 {
        let text = compose_file(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        if Yaml::parse(&text).is_err() {
            continue;
        }
        parsed += 1;
        let outcome = fix_text(
            &text,
            Path::new("compose.yaml"),
            &Config::default(),
            FixMode { unsafe_fixes: true },
        )
        .unwrap();
        if !outcome.applied.is_empty() {
            fixed += 1;
        }
    }
    assert!(parsed >= 190, "only {parsed}/200 generated files parse");
    assert!(
        fixed >= 100,
        "only {fixed}/200 generated files had fixes applied"
    );
}

//! SLURM005: an Apptainer/Singularity container in a GPU job started
//! without `--nv`, so it sees no GPU.

use crate::rules::{Check, Reporter, ScriptContext};

pub const CHECK: Check = Check::slurm(check);

const GPU_FLAGS: &[&str] = &["--nv", "--nvccli", "--rocm"];

fn check(cx: &ScriptContext, out: &mut Reporter) {
    let Some(batch) = &cx.script.batch else {
        return;
    };
    if !batch.requests_gpus() {
        return;
    }
    for (_, command) in &cx.script.commands {
        let words = &command.words;
        let Some(at) = words.iter().position(|w| {
            !w.dynamic && matches!(w.text.rsplit('/').next(), Some("apptainer" | "singularity"))
        }) else {
            continue;
        };
        let Some(sub) = words
            .get(at + 1)
            .filter(|w| matches!(w.text.as_str(), "exec" | "run" | "shell"))
        else {
            continue;
        };
        // Options sit between the subcommand and the image; a variable
        // there may hold `--nv`.
        let options = words[at + 2..]
            .iter()
            .take_while(|w| w.text.starts_with('-') || w.dynamic);
        let mut unknown = false;
        let mut has_gpu_flag = false;
        for word in options {
            unknown |= word.dynamic;
            has_gpu_flag |=
                GPU_FLAGS.contains(&word.text.as_str()) || word.text.starts_with("--nv=");
        }
        if has_gpu_flag || unknown {
            continue;
        }
        out.report(
            words[at].range.cover(sub.range),
            format!("`{} {}` in a GPU job without `--nv`: the container sees no GPU", words[at].text, sub.text),
        )
        .label("no `--nv`")
        .note("Apptainer binds the NVIDIA driver libraries and devices into the container only with `--nv` (or `--nvccli`); without it CUDA finds no device and training falls back to the CPU or fails")
        .help(format!("add `--nv`: `{} {} --nv ...`", words[at].text, sub.text));
    }
}

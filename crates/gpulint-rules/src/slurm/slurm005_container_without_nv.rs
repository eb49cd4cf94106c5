//! SLURM005: an Apptainer/Singularity container in a GPU job started
//! without `--nv`, so it sees no GPU.

use crate::diagnostic::Severity;
use crate::{Check, Reporter, ScriptContext};

/// Programs that move files or packages and use no GPU: a container that
/// runs one of them in a GPU job needs no `--nv` for it.
const NO_GPU_PROGRAMS: &[&str] = &[
    "huggingface-cli",
    "hf",
    "wget",
    "curl",
    "git",
    "git-lfs",
    "pip",
    "pip3",
    "tar",
    "cp",
    "mv",
    "rsync",
    "ls",
    "cat",
    "echo",
    "mkdir",
    "rm",
    "unzip",
    "gsutil",
    "aws",
    "rclone",
    "ln",
];

crate::declare_rule! {
    name: "apptainer-without-nv",
    severity: Error,
    fix: None,
    summary: "Apptainer/Singularity container in a GPU job without --nv",
    sources: [
        "Apptainer docs, GPU support: `--nv` sets up the container to use NVIDIA GPUs (driver libraries and /dev/nvidia*)",
        "apptainer/apptainer `cmd/internal/cli/action_flags.go` and `cmd/internal/cli/apptainer.go` (the option tables)",
    ],
}

pub const CHECK: Check = Check::slurm(check);

fn check(cx: &ScriptContext, out: &mut Reporter) {
    // Options are read as Apptainer reads them (`model::apptainer`): one
    // that takes a value is skipped with it, and an option or variable
    // gpulint cannot read past may hold `--nv`.
    for run in &cx.script.apptainer_runs {
        let gpu_job = cx
            .script
            .batch_for(run.range)
            .is_some_and(|b| b.requests_gpus());
        if !gpu_job || run.gpu_option.is_some() || run.uncertain.is_some() {
            continue;
        }
        let program = &run.program.text;
        // A download or copy in a GPU job needs no GPU: it informs.
        let uses_no_gpu = run
            .program_in_container
            .as_deref()
            .is_some_and(|p| NO_GPU_PROGRAMS.contains(&p));
        out.report(
            run.range,
            format!("`{program} {}` in a GPU job without `--nv`: the container sees no GPU", run.action),
        )
        .label("no `--nv` before the image")
        .note("Apptainer binds the NVIDIA driver libraries and devices into the container only with `--nv` (or `--nvccli`); without it CUDA finds no device and training falls back to the CPU or fails")
        .help(format!("add `--nv`: `{program} {} --nv ...`", run.action))
        .severity(if uses_no_gpu { Severity::Info } else { Severity::Error });
    }
}

//! SLURM005: an Apptainer/Singularity container in a GPU job started
//! without `--nv`, so it sees no GPU.

use crate::rules::{Check, Reporter, ScriptContext};

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
        out.report(
            run.range,
            format!("`{program} {}` in a GPU job without `--nv`: the container sees no GPU", run.action),
        )
        .label("no `--nv` before the image")
        .note("Apptainer binds the NVIDIA driver libraries and devices into the container only with `--nv` (or `--nvccli`); without it CUDA finds no device and training falls back to the CPU or fails")
        .help(format!("add `--nv`: `{program} {} --nv ...`", run.action));
    }
}

//! SLURM003: ranks per node that disagree with the GPUs per node the job
//! asks for.

use crate::diagnostic::Severity;
use crate::{Check, Reporter, ScriptContext};

crate::declare_rule! {
    name: "ranks-per-node-gpu-mismatch",
    severity: Error,
    fix: None,
    summary: "torchrun ranks per node differ from the job's GPUs per node",
    sources: [
        "PyTorch torchrun docs: `--nproc-per-node` is the number of workers per node, usually the number of GPUs",
        "NCCL: `Duplicate GPU detected` when two ranks share a device",
        "seed 004 (SLURM and NCCL communicator setup)",
    ],
}

pub const CHECK: Check = Check::slurm(check);

fn check(cx: &ScriptContext, out: &mut Reporter) {
    for launch in &cx.script.launches {
        let Some(batch) = cx.script.batch_for(launch.range) else {
            continue;
        };
        let Some((gpus, asked)) = batch.gpus_per_node() else {
            continue;
        };
        if gpus == 0 {
            continue;
        }
        let Some((ranks, word)) = launch.ranks_per_node() else {
            continue;
        };
        if ranks == gpus {
            continue;
        }
        let (severity, consequence) = if ranks > gpus {
            (
                Severity::Error,
                "ranks share GPUs and NCCL aborts with `Duplicate GPU detected`",
            )
        } else {
            (
                Severity::Warning,
                "the other GPUs sit idle for the whole job",
            )
        };
        let asked_text = &cx.text[asked.range.as_range()];
        out.report(
            word.range,
            format!("torchrun starts {ranks} ranks per node, but the job has {gpus} GPUs per node"),
        )
        .severity(severity)
        .label(format!("{ranks} per node"))
        .related(asked.range, format!("`{asked_text}` gives each node {gpus} GPUs"))
        .note(format!("each torchrun rank drives one GPU: with {ranks} ranks on {gpus} GPUs, {consequence}"))
        .help(format!("start {gpus} ranks per node (`--nproc-per-node={gpus}`), or ask for {ranks} GPUs per node"));
    }
}

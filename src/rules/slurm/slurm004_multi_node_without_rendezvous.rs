//! SLURM004: torchrun across nodes with no rendezvous address.

use crate::rules::{Check, Reporter, ScriptContext};

pub const CHECK: Check = Check::slurm(check);

fn check(cx: &ScriptContext, out: &mut Reporter) {
    let Some(batch) = &cx.script.batch else {
        return;
    };
    let nodes = batch.count("--nodes");
    for launch in &cx.script.launches {
        let launch_nodes = launch.nnodes.as_deref().and_then(|n| n.parse::<u64>().ok());
        let multi_node = launch_nodes.or(nodes).is_some_and(|n| n > 1);
        if !multi_node || launch.has_rendezvous || launch.opaque_arguments {
            continue;
        }
        if cx.script.assigns("MASTER_ADDR")
            || cx.script.assigns("PET_RDZV_ENDPOINT")
            || cx.script.assigns("PET_MASTER_ADDR")
        {
            continue;
        }
        let n = launch_nodes.or(nodes).unwrap_or(2);
        out.report(
            launch.launcher.range,
            format!("torchrun runs on {n} nodes but is given no rendezvous address"),
        )
        .label("no `--rdzv-endpoint` or `--master-addr`")
        .note("without one, torchrun on every node rendezvous at its own 127.0.0.1: the nodes never meet, and the job hangs until the rendezvous times out")
        .help("pass `--rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:29500` with `export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)`");
    }
}

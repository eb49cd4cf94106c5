//! SLURM004: torchrun across nodes with no rendezvous address.

use crate::model::slurm::{TorchLaunch, runs_on_several_nodes};
use crate::{Check, Reporter, ScriptContext};

crate::declare_rule! {
    name: "multi-node-torchrun-without-rendezvous",
    severity: Error,
    fix: None,
    summary: "torchrun on several nodes with no rendezvous address",
    sources: [
        "PyTorch torchrun docs: `--master-addr` defaults to 127.0.0.1; multi-node jobs set `--rdzv-endpoint`",
        "seed 004: NCCL communicator setup fails when nodes cannot find the master",
    ],
}

pub const CHECK: Check = Check::slurm(check);

fn check(cx: &ScriptContext, out: &mut Reporter) {
    for launch in &cx.script.launches {
        let Some(batch) = cx.script.batch_for(launch.range) else {
            continue;
        };
        let nodes = batch.count("--nodes");
        let launch_nodes = launch.nnodes.as_deref().and_then(|n| n.parse::<u64>().ok());
        let multi_node = launch_nodes.or(nodes).is_some_and(|n| n > 1);
        if !multi_node || launch.has_rendezvous || launch.opaque_arguments {
            continue;
        }
        // A branch the node count keeps from running on several nodes
        // (`else` of `if [ "$SLURM_NNODES" -gt 1 ]`) is a one-node launch.
        if !runs_on_several_nodes(&launch.branches) {
            continue;
        }
        // Where nothing the script says decides the branch, a sibling
        // branch that launches with an endpoint is the multi-node launch.
        if sibling_meets(launch, &cx.script.launches) {
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

/// Whether, in a branch none of whose conditions gpulint can read, a
/// sibling branch holds a launch given a rendezvous endpoint.
fn sibling_meets(launch: &TorchLaunch, launches: &[TorchLaunch]) -> bool {
    launch
        .branches
        .iter()
        .filter(|path| path.known.is_empty())
        .flat_map(|path| &path.siblings)
        .any(|sibling| {
            launches.iter().any(|other| {
                other.endpoint
                    && sibling.start <= other.range.start
                    && other.range.end <= sibling.end
            })
        })
}

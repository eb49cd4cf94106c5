//! ULIM001: multi-GPU training or RDMA containers without `memlock: -1`.

use crate::diagnostic::Severity;
use crate::model::container::Gpus;
use crate::{Check, ContainerSite, Reporter};

crate::declare_rule! {
    name: "memlock-not-unlimited",
    severity: Info,
    fix: Safe,
    summary: "multi-GPU training or RDMA service without memlock: -1",
    sources: [
        "NCCL troubleshooting, Docker section",
        "NGC container banner (`--ulimit memlock=-1`)",
    ],
}

/// A pod spec sets no ulimits (the container runtime's service limits
/// decide), so a pod has nothing to fix.
pub const CHECK: Check = Check::containers(check).except_pods();

fn check(site: &ContainerSite, out: &mut Reporter) {
    let model = site.model;
    let multi_gpu = model.gpus.is_some_and(Gpus::is_multi) || model.ranks.is_some_and(|r| r >= 2);
    let multi_gpu_training = model.gpus.is_some() && multi_gpu && model.launcher.is_some();
    if !(model.rdma || multi_gpu_training) || !site.fully_known() {
        return;
    }
    let memlock = site.ulimit("memlock");
    if memlock.as_ref().is_some_and(|m| m.unlimited || m.dynamic) {
        return;
    }
    let why = if model.rdma {
        "uses RDMA/InfiniBand".to_string()
    } else {
        site.gpu_reason()
    };
    let at = memlock.as_ref().map_or_else(|| site.at(), |m| m.at.clone());
    let mut finding = out
        .report(
            at,
            format!(
                "{} does not lift the locked-memory limit (`memlock`)",
                site.describe()
            ),
        )
        .severity(if model.rdma {
            Severity::Warning
        } else {
            Severity::Info
        })
        .label(format!("{} {why}", site.noun()));
    // A later file removes it (`ulimits: !reset`): no fix the reset would
    // undo, and where it is.
    if memlock.is_none()
        && let Some(reset) = site.reset_of("ulimits.memlock")
    {
        finding = finding.related(reset, "a later file of the project resets `ulimits` here");
    }
    finding
        .note("Docker containers default to a small locked-memory limit; NCCL's docs ask for `--ulimit memlock=-1`, and registering RDMA buffers fails with `NCCL WARN Call to ibv_reg_mr failed` or `ibv_create_cq ... Cannot allocate memory`")
        .help(site.ulimit_help("memlock", "-1"))
        .fix(site.set_ulimit_fix("memlock", "-1", "unlimited"));
}

//! ULIM003: an unlimited stack ulimit (`stack: -1`, `--ulimit
//! stack=-1`), which NCCL crashes with.

use crate::{Check, ContainerSite, Reporter};

crate::declare_rule! {
    name: "unlimited-stack",
    severity: Warning,
    fix: Safe,
    summary: "stack ulimit set to unlimited",
    sources: [
        "NCCL troubleshooting (stack size)",
        "NGC container banner",
    ],
}

/// A pod spec sets no ulimits.
pub const CHECK: Check = Check::containers(check).except_pods();

fn check(site: &ContainerSite, out: &mut Reporter) {
    let Some(stack) = site.ulimit("stack") else {
        return;
    };
    if !stack.soft_unlimited || stack.dynamic {
        return;
    }
    out.report(
        stack.at,
        format!("{} sets an unlimited stack size", site.describe()),
    )
    .label(format!("{} means unlimited", site.ulimit_written("stack", "-1")))
    .note("with an unlimited stack glibc gives each new thread only 2 MiB; NCCL's troubleshooting guide reports crashes with this setting (NGC images recommend 64 MiB)")
    .help(format!(
        "use {} (64 MiB), as NVIDIA's containers recommend",
        site.ulimit_written("stack", "67108864")
    ))
    .fix(site.set_ulimit_fix("stack", "67108864", "64 MiB"));
}

//! SHM002: `/dev/shm` sized below what GPU jobs need: a compose `shm_size`
//! or tmpfs size, `--shm-size`, or the `sizeLimit` of a Kubernetes
//! `/dev/shm` emptyDir.

use crate::diagnostic::Severity;
use crate::helpers::shm_note;
use crate::model::container::{ShmKind, ShmSetting};
use crate::model::shm_need::{shm_floor, shm_need};
use crate::model::size::{HumanBytes, MIB};
use crate::{Check, ContainerSite, Reporter};

crate::declare_rule! {
    name: "small-shm-size",
    severity: Warning,
    fix: Unsafe,
    summary: "/dev/shm sized below what GPU jobs need",
    sources: [
        "DeepSpeed `env_report.py` `get_shm_size()` (512 MiB warning)",
        "NCCL troubleshooting (`--shm-size=1g`)",
        "pytorch/torchtitan#853",
        "NVIDIA/nccl#342 (9,637,888-byte segments)",
        "huggingface/text-generation-inference README, \"A note on Shared Memory (shm)\"",
        "vLLM docs, Deploying with Docker and deployment/k8s.md",
        "vLLM `vllm/distributed/device_communicators/shm_broadcast.py` and `VLLM_MQ_MAX_CHUNK_BYTES_MB`",
        "SGLang docs, docker instructions (`--shm-size 32g` with `--ipc=host`)",
        "triton-inference-server/python_backend README, Managing Shared Memory",
        "the reference workload `tests/runtime/workload.py`, measured on Docker Engine 20.10",
    ],
}

pub const CHECK: Check = Check::containers(check);

/// A size the container's settings write (`shm_size`, `--shm-size`, a
/// tmpfs or a memory emptyDir at /dev/shm) below what its workload needs.
fn check(site: &ContainerSite, out: &mut Reporter) {
    let model = site.model;
    if !model.gpu_workload {
        return;
    }
    let shm = &model.shm;
    let (ShmKind::Sized, Some(bytes), ShmSetting::Size | ShmSetting::Mount) =
        (shm.kind, shm.bytes, shm.decided_by)
    else {
        return;
    };
    // A bare number under a mebibyte is a unit mistake: SHM003 reports it.
    if shm.decided_by == ShmSetting::Size && site.shm_size_is_bare_bytes() && bytes < MIB {
        return;
    }
    let policy = site.settings().shm_policy();
    let need = shm_need(model, &policy);
    // A size someone wrote is not called too small against a workload
    // gpulint would have to assume (it cannot tell what runs): it is held
    // to the floor alone.
    let need = if need.assumed {
        shm_floor(&policy)
    } else {
        need
    };
    if bytes >= need.bytes {
        return;
    }
    let Some(setting) = site.sized_shm(&need) else {
        return;
    };
    if setting.bytes >= need.bytes {
        return;
    }
    let key = match need.key {
        Some(key) => format!(" (`{key}` in gpulint.toml's [shm] changes the threshold)"),
        None => String::new(),
    };
    // Below the floor, with no shared-memory use the config shows, it
    // only informs.
    let evidence = model.shm_evidence();
    let severity = match &evidence {
        Some(_) => Severity::Warning,
        None => Severity::Info,
    };
    let finding = out
        .report(
            setting.at,
            format!(
                "/dev/shm of {} is below the {} that {} needs: {}",
                HumanBytes(setting.bytes),
                HumanBytes(need.bytes),
                site.describe(),
                need.reason,
            ),
        )
        .severity(severity)
        .note(shm_note(evidence.as_deref()))
        .help(format!("raise it to at least {}{key}", setting.suggested))
        .label(setting.label);
    site.gpu_evidence(finding).fix(setting.raise);
}

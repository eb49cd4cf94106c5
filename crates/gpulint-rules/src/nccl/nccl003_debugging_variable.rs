//! NCCL003: other NCCL debugging variables left in a compose service or a
//! container, classified as NCCL's environment documentation does: an
//! unsafe protocol forced is a warning; a transport switched off (often
//! deliberate), a tuning override or trace logging is info; and system
//! configuration (interfaces, HCAs, GPUDirect levels) is no finding.

use crate::diagnostic::Severity;
use crate::{Check, EnvSetting, EnvSource, Reporter};

crate::declare_rule! {
    name: "nccl-debugging-variable",
    severity: Info,
    fix: Unsafe,
    summary: "other NCCL debugging variables left in a config",
    sources: [
        "NCCL user guide, environment variables (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html)",
        "NCCL user guide, troubleshooting: logging (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/logging.html)",
    ],
}

pub const CHECK: Check = Check::env(check);

/// Tuning overrides from the "Debugging" section of NCCL's environment
/// documentation (the SHM and P2P switches have their own rules;
/// `NCCL_IB_DISABLE` and `NCCL_DEBUG` are judged by their value below).
/// `NCCL_NET_GDR_LEVEL` and `NCCL_NET_GDR_READ` are not here: the docs list
/// them under "System configuration", site settings that belong in configs.
const DEBUGGING: &[&str] = &[
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_BUFFSIZE",
    "NCCL_NTHREADS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_CTAS",
    "NCCL_MIN_CTAS",
    "NCCL_LAUNCH_MODE",
    "NCCL_CHECKS_DISABLE",
    "NCCL_CUMEM_ENABLE",
    "NCCL_CUMEM_HOST_ENABLE",
    "NCCL_NVLS_ENABLE",
    "NCCL_P2P_DIRECT_DISABLE",
    "NCCL_NVB_DISABLE",
    "NCCL_PXN_DISABLE",
    "NCCL_MNNVL_ENABLE",
    "NCCL_DMABUF_ENABLE",
];

/// `NCCL_PROTO` lists protocols to use, or with a leading `^` ones to
/// exclude: LL128 is forced only when listed without the `^`.
fn forces_ll128(value: &str) -> bool {
    !value.starts_with('^')
        && value
            .split(',')
            .any(|p| p.trim().eq_ignore_ascii_case("LL128"))
}

/// How a variable set to a value is reported: its severity and label.
fn classify(name: &str, value: &str) -> Option<(Severity, &'static str)> {
    let value = value.trim();
    match name {
        // Turning a transport off is what the debugging section warns about
        // most: inter-node traffic falls back to TCP sockets.
        // Often deliberate (a job meant for Ethernet): it informs.
        "NCCL_IB_DISABLE" => (value == "1").then_some((
            Severity::Info,
            "disables the InfiniBand/RoCE transport: traffic between nodes falls back to sockets",
        )),
        // `WARN` is the production minimum and `INFO` a common diagnostic
        // level (NCCL's logging guide); `TRACE` logs every call.
        "NCCL_DEBUG" => value.eq_ignore_ascii_case("TRACE").then_some((
            Severity::Info,
            "TRACE logs every NCCL call and slows collectives",
        )),
        // `^LL128` excludes it (NCCL's `^` negates the list): the safe
        // setting, and no finding.
        "NCCL_PROTO" if forces_ll128(value) => Some((
            Severity::Warning,
            "forcing LL128 where it is unsupported can corrupt data",
        )),
        _ => DEBUGGING
            .contains(&name)
            .then_some((Severity::Info, "a tuning knob for debugging")),
    }
}

fn check(var: &EnvSetting, out: &mut Reporter) {
    let Some((severity, label)) = classify(var.name, var.value.unwrap_or("")) else {
        return;
    };
    // Set by the script for what it runs: only a transport switched off or
    // an unsafe protocol. Batch and launch scripts are where sites keep
    // their tuning (`NCCL_ALGO=Ring` across nodes), which is not flagged
    // there.
    if var.source == EnvSource::Script && severity != Severity::Warning {
        return;
    }
    var.report(out, format!("{} sets the NCCL debugging variable {}", var.owner, var.name))
        .severity(severity)
        .label(label)
        .note("NCCL's docs say debugging variables \"should not be used in production nor retained in scripts\": they override NCCL's own tuning and can cause sub-optimal behaviour, crashes or hangs on other hardware or NCCL versions")
        .help(format!("remove {} once the problem it worked around is fixed", var.name));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classified_as_nccl_docs_do() {
        let severity = |name, value| classify(name, value).map(|(s, _)| s);
        assert_eq!(severity("NCCL_IB_DISABLE", "1"), Some(Severity::Info));
        assert_eq!(severity("NCCL_IB_DISABLE", "0"), None);
        assert_eq!(severity("NCCL_DEBUG", "TRACE"), Some(Severity::Info));
        assert_eq!(severity("NCCL_DEBUG", "INFO"), None);
        assert_eq!(severity("NCCL_ALGO", "Ring"), Some(Severity::Info));
        assert_eq!(severity("NCCL_PROTO", "LL128"), Some(Severity::Warning));
        assert_eq!(
            severity("NCCL_PROTO", "Simple,LL128"),
            Some(Severity::Warning)
        );
        // `^` excludes: the safe setting is a tuning override, not a warning.
        assert_eq!(severity("NCCL_PROTO", "^LL128"), Some(Severity::Info));
        for site in [
            "NCCL_NET_GDR_LEVEL",
            "NCCL_NET_GDR_READ",
            "NCCL_SOCKET_IFNAME",
            "NCCL_IB_HCA",
            "NCCL_CROSS_NIC",
            "NCCL_NET",
        ] {
            assert_eq!(severity(site, "1"), None, "{site}");
        }
    }
}

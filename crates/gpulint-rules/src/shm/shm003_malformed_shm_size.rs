//! SHM003: a `shm_size` Compose rejects, or a bare number that means bytes.

use crate::diagnostic::Severity;
use crate::fix::Applicability;
use crate::helpers::service_shm_need;
use crate::model::compose::{Service, ShmMount, Spanned};
use crate::model::shm_need::shm_need;
use crate::model::size::{
    HumanBytes, KERNEL_TMPFS_REFUSES, MIB, SizeValue, in_whole_units, old_go_units_reads,
    parse_compose_size, parse_tmpfs_size_option, tmpfs_size_meant, tmpfs_size_option,
    tmpfs_size_spelling, with_tmpfs_size,
};
use crate::project::{Place, RefusalKind};
use crate::{Check, ComposeContext, Reporter, RuleSettings, ScriptContext};

crate::declare_rule! {
    name: "malformed-shm-size",
    severity: Error,
    fix: Safe,
    summary: "shm_size Compose rejects (or older Compose builds do), or a bare number that counts bytes",
    sources: [
        "compose-go `types/bytes.go` (`UnitBytes`)",
        "docker/go-units `RAMInBytes`",
        "moby `SHM size can not be less than 0`",
    ],
}

pub const CHECK: Check = Check::compose(check).and_commands(commands);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        tmpfs_sizes(cx, service, out);
        let Some(shm) = &service.shm_size else {
            continue;
        };
        let range = cx.range(shm.node);
        match &shm.value {
            // A value the project refuses as a whole (an interpolation
            // Compose cannot read) is PROJ001's finding, once.
            SizeValue::Invalid { .. }
                if cx.project.refusals.iter().any(|r| {
                    r.at == Place::Node(shm.node)
                        && r.kind != RefusalKind::ConfigReportedBy(crate::RuleCode::SHM003)
                }) => {}
            SizeValue::Invalid { reason, .. } => {
                out.report(
                    range,
                    format!(
                        "`shm_size` of service `{}` is not a valid size: {reason}",
                        service.name
                    ),
                )
                .severity(Severity::Error)
                .note("`docker compose` refuses to load the file")
                .help("write a number with a unit: \"512mb\", \"8gb\"");
            }
            SizeValue::Dropped { text, reason } => {
                out.report(range, format!("`shm_size: {text}` of service `{}` is {reason}", service.name))
                    .severity(Severity::Error)
                    .note("the container gets Docker's default 64 MiB /dev/shm (measured with Compose 2.26 and 2.40)")
                    .help("write a quoted size with a unit: \"8gb\"");
            }
            SizeValue::Negative(n) => {
                out.report(
                    range,
                    format!("`shm_size: {n}` of service `{}` is negative", service.name),
                )
                .severity(Severity::Error)
                .note(
                    "the engine refuses to create the container: `SHM size can not be less than 0`",
                )
                .help("write a positive size with a unit: \"8gb\"");
            }
            SizeValue::Bytes {
                bytes,
                bare_number: false,
            } => spelling_older_compose_refuses(cx, service, shm, *bytes, out),
            SizeValue::Bytes {
                bytes,
                bare_number: true,
            } if *bytes > 0 && *bytes < MIB => {
                let written = cx.source(shm.node);
                out.report(
                    range,
                    format!(
                        "`shm_size: {written}` of service `{}` is {}: a number without a unit counts bytes",
                        service.name,
                        HumanBytes(*bytes)
                    ),
                )
                .severity(Severity::Warning)
                .note("a /dev/shm this small makes every shared-memory user fail with `No space left on device` or `Bus error`")
                .help(format!("add the unit you meant: \"{bytes}mb\" or \"{bytes}gb\""));
            }
            _ => {}
        }
    }
}

/// A literal size upstream Compose reads but Compose built with
/// docker/go-units v0.4 refuses: rewritten in whole units, the same size.
fn spelling_older_compose_refuses(
    cx: &ComposeContext,
    service: &Service,
    shm: &Spanned<SizeValue>,
    bytes: u64,
    out: &mut Reporter,
) {
    let range = cx.range(shm.node);
    // A literal spelling upstream Compose reads but Debian's
    // package refuses (an interpolated one depends on the caller).
    let written = cx.source(shm.node);
    let Some(text) = cx.yaml(shm.node.file).str(shm.node.node) else {
        return;
    };
    if text.contains('$') || old_go_units_reads(text) {
        return;
    }
    // Bytes keep a `b`: a bare number would count bytes silently.
    let portable = in_whole_units(bytes).unwrap_or_else(|| format!("{bytes}b"));
    // The same size in another spelling: nothing the service
    // gets changes, so the fix is safe.
    let editor = cx.editor(shm.node.file);
    let fix = cx.edit_fix(
        service,
        shm.node,
        &["shm_size"],
        vec![editor.replace(shm.node.node, editor.scalar_like(shm.node.node, &portable))],
        &[&["shm_size"]],
        format!("Write `shm_size: \"{portable}\"`"),
        Applicability::Safe,
    );
    out.report(
        range,
        format!(
            "`shm_size: {written}` of service `{}` is {} for Docker's Compose, but older builds refuse it",
            service.name,
            HumanBytes(bytes)
        ),
    )
    .severity(Severity::Warning)
    .note("Compose built with docker/go-units v0.4 (Debian 13's `docker-compose` 2.26 package) refuses a sign, an exponent, a leading or trailing `.` and `_` in a size: `docker compose` stops with `invalid size`")
    .help(format!("write `shm_size: \"{portable}\"`, which every Compose reads as the same size"))
    .fix(fix);
}

/// `docker run --shm-size=2gigs` (the CLI refuses it) or `--shm-size 2`
/// (two bytes), on any container: the size is wrong whatever runs in it.
fn commands(cx: &ScriptContext, out: &mut Reporter) {
    for site in &cx.script.runs {
        for (_, tmpfs) in site.run.options_named("--tmpfs") {
            let Some(value) = tmpfs.value.as_deref().filter(|_| !tmpfs.dynamic) else {
                continue;
            };
            let Some(size) = value.strip_prefix("/dev/shm:").and_then(tmpfs_size_option) else {
                continue;
            };
            if !matches!(parse_tmpfs_size_option(size), SizeValue::Invalid { .. }) {
                continue;
            }
            let meant = tmpfs_size_meant(size);
            let need = site
                .run
                .gpu_request()
                .is_some()
                .then(|| shm_need(cx.container(site), &cx.settings.shm_policy()).bytes);
            let plan = meant
                .as_deref()
                .map(|meant| tmpfs_fix(cx.settings, meant, need));
            let fix = plan.as_ref().and_then(|(size, title, applicability)| {
                cx.set_option_value(
                    site,
                    tmpfs,
                    &with_tmpfs_size(value, size)?,
                    title.clone(),
                    *applicability,
                )
            });
            out.report(
                tmpfs.range,
                format!("`--tmpfs {value}` has `size={size}`, which the kernel refuses"),
            )
            .severity(Severity::Error)
            .note(TMPFS_SIZE_REFUSED)
            .help(tmpfs_size_help(plan.as_ref().map(|p| p.0.as_str())))
            .fix(fix);
        }
        let Some((_, shm)) = site.run.option("--shm-size") else {
            continue;
        };
        let (Some(raw), false) = (shm.value.as_deref(), shm.dynamic) else {
            continue;
        };
        match crate::model::size::parse_compose_size(raw) {
            SizeValue::Invalid { reason, .. } => {
                out.report(shm.range, format!("`--shm-size {raw}` is not a valid size: {reason}"))
                    .severity(Severity::Error)
                    .note("the Docker CLI refuses the command: `invalid argument ... for \"--shm-size\" flag`")
                    .help("write a number with a unit: `--shm-size=8gb`");
            }
            SizeValue::Negative(n) => {
                out.report(shm.range, format!("`--shm-size {n}` is negative"))
                    .severity(Severity::Error)
                    .note("the engine refuses to create the container: `SHM size can not be less than 0`")
                    .help("write a positive size with a unit: `--shm-size=8gb`");
            }
            SizeValue::Bytes {
                bytes,
                bare_number: true,
            } if bytes > 0 && bytes < MIB => {
                out.report(shm.range, format!("`--shm-size {raw}` is {}: a number without a unit counts bytes", HumanBytes(bytes)))
                    .severity(Severity::Warning)
                    .note("a /dev/shm this small makes every shared-memory user fail with `No space left on device` or `Bus error`")
                    .help(format!("add the unit you meant: `--shm-size={bytes}mb` or `--shm-size={bytes}gb`"));
            }
            _ => {}
        }
    }
}

/// A `tmpfs: /dev/shm:size=...` option the kernel refuses (`1gb`, `1GiB`,
/// `1.5g`): Compose loads the file, and the container fails to start.
fn tmpfs_sizes(cx: &ComposeContext, service: &Service, out: &mut Reporter) {
    for mount in &service.shm_mounts {
        let ShmMount::Tmpfs(Some(SizeValue::Invalid { text, reason })) = &mount.value else {
            continue;
        };
        let Some(written) = cx
            .yaml(mount.node.file)
            .str(mount.node.node)
            .filter(|_| reason.starts_with(KERNEL_TMPFS_REFUSES))
        else {
            continue;
        };
        let meant = tmpfs_size_meant(text);
        let need = service
            .is_gpu_workload()
            .then(|| service_shm_need(cx, service).bytes);
        let plan = meant
            .as_deref()
            .map(|meant| tmpfs_fix(cx.settings, meant, need));
        let fix = plan.as_ref().filter(|_| !written.contains('$')).and_then(
            |(size, title, applicability)| {
                let fixed = with_tmpfs_size(written, size)?;
                let editor = cx.editor(mount.node.file);
                cx.edit_fix(
                    service,
                    mount.node,
                    &["tmpfs"],
                    vec![
                        editor
                            .replace(mount.node.node, editor.scalar_like(mount.node.node, &fixed)),
                    ],
                    &[&["tmpfs"]],
                    title.clone(),
                    *applicability,
                )
            },
        );
        out.report(
            cx.range(mount.node),
            format!(
                "the /dev/shm tmpfs of service `{}` has `size={text}`, which the kernel refuses",
                service.name
            ),
        )
        .severity(Severity::Error)
        .note(TMPFS_SIZE_REFUSED)
        .help(tmpfs_size_help(plan.as_ref().map(|p| p.0.as_str())))
        .fix(fix);
    }
}

/// The size a refused tmpfs `size=` is rewritten to, the fix's title and
/// applicability: the size the author `meant`, in the kernel's spelling,
/// which only respells it (safe); but when a GPU workload `need`s more
/// than that, SHM002 would report the respelled size, so `--fix` would
/// refuse the respelling alone: the fix writes the size SHM002 raises to
/// instead, in one edit, and is unsafe as SHM002's raise is.
fn tmpfs_fix(
    settings: &RuleSettings,
    meant: &str,
    need: Option<u64>,
) -> (String, String, Applicability) {
    let meant_bytes = match parse_compose_size(meant) {
        SizeValue::Bytes { bytes, .. } => bytes,
        _ => 0,
    };
    let raised =
        need.filter(|&need| meant_bytes < need).and_then(|need| {
            match parse_compose_size(&settings.shm_size_for(need)) {
                SizeValue::Bytes { bytes, .. } => Some((tmpfs_size_spelling(bytes), need)),
                _ => None,
            }
        });
    match raised {
        Some((size, need)) => (
            size.clone(),
            format!(
                "Write `size={size}` (the `{meant}` meant is below the {} this workload needs)",
                HumanBytes(need)
            ),
            Applicability::Unsafe,
        ),
        None => (
            meant.to_string(),
            format!("Write `size={meant}`"),
            Applicability::Safe,
        ),
    }
}

const TMPFS_SIZE_REFUSED: &str = "Docker hands tmpfs options to mount(2) unread; the kernel takes a whole number and at most one of k, m, g, so the container fails to start: `mount tmpfs ... data: size=...: invalid argument`";

/// The help for a refused tmpfs size: the size its fix writes (what the
/// author meant, or what the workload needs), when Docker's own reader sees
/// one.
fn tmpfs_size_help(size: Option<&str>) -> String {
    match size {
        Some(size) => format!("write `size={size}`"),
        None => "write a whole number with k, m or g: `size=8g`".to_string(),
    }
}

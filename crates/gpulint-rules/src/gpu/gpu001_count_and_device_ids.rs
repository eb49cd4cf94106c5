//! GPU001: a device request with both `count` and `device_ids`: in a
//! compose file, or the Docker CLI's reading of `docker run --gpus
//! device=0,1` (device 0 and a count of 1).

use crate::fix::{Applicability, Edit};
use crate::helpers::device_request_site;
use crate::model::gpu_request::parse_gpus;
use crate::{Check, ComposeContext, Reporter, ScriptContext};

crate::declare_rule! {
    name: "count-and-device-ids",
    severity: Error,
    fix: Safe,
    summary: "GPU request with both count and device_ids",
    sources: [
        "compose-go `types/device.go` validation",
        "Docker docs, Compose GPU support",
        "docker/cli `opts/gpus.go` (`GpuOpts.Set`: one CSV record)",
        "moby `daemon/devices_nvidia_linux.go` (`errConflictCountDeviceIDs`)",
        "Docker docs, `docker run --gpus '\"device=1,2\"'`",
    ],
}

pub const CHECK: Check = Check::compose(check).and_commands(commands);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for request in &service.device_requests {
            let (Some(count), Some(ids)) = (&request.count, &request.device_ids) else {
                continue;
            };
            // Which of the two the user meant is a guess, so the fix is only shown.
            let fix = count.key.and_then(|key| {
                let site = device_request_site(cx, service, request)?;
                let site: Vec<&str> = site.iter().map(String::as_str).collect();
                let mut changed = site.clone();
                changed.push("count");
                let file = request.node.file;
                let edit = cx
                    .editor(file)
                    .remove_entry(cx.yaml(file).resolve(request.node.node), key.node)
                    .ok()?;
                cx.edit_fix(
                    service,
                    request.node,
                    &site,
                    vec![edit],
                    &[&changed],
                    "Remove `count` and keep `device_ids`",
                    Applicability::DisplayOnly,
                )
            });
            out.report(
                cx.setting_range(count),
                format!(
                    "GPU request of service `{}` sets both `count` and `device_ids`",
                    service.name
                ),
            )
            .label("remove this or `device_ids`")
            .related(
                cx.setting_range(ids),
                "`device_ids` already says which GPUs",
            )
            .note(
                "Compose refuses the file: `\"count\" and \"device_ids\" attributes are exclusive`",
            )
            .help("keep `device_ids` to pin specific GPUs, or `count` to take any N of them")
            .fix(fix);
        }
    }
}

/// `docker run --gpus` values whose device request has both a count and
/// device ids: the daemon refuses the container when it starts. Written as
/// a comma list without the CSV quotes (`device=0,1`), the fix adds them:
/// `'"device=0,1"'`, as Docker's documentation writes it.
fn commands(cx: &ScriptContext, out: &mut Reporter) {
    for site in &cx.script.runs {
        for (_, option) in site.run.options_named("--gpus") {
            let Some(value) = option.value.as_deref().filter(|_| !option.dynamic) else {
                continue;
            };
            let Some(refusal) = parse_gpus(value).ok().and_then(|r| r.start_refusal()) else {
                continue;
            };
            let quoted = quoted_device_list(value);
            let fix = quoted.as_ref().and_then(|csv| {
                let range = option.value_range?;
                let content = cx.literal_word(csv)?;
                // Only a value written as one bare word is rewritten.
                (cx.text.get(range.as_range())? == value).then(|| {
                    cx.run_fix(
                        site,
                        format!("Quote the device list: `--gpus '{csv}'`"),
                        Applicability::Safe,
                        vec![Edit { range, content }],
                    )
                })
            });
            let finding = out
                .report(
                    option.range,
                    format!(
                        "`{} --gpus {value}` asks for both a GPU count and device ids",
                        site.run.invocation()
                    ),
                )
                .label(if quoted.is_some() {
                    "the Docker CLI reads the list as one device and a count"
                } else {
                    "a count and device ids in one request"
                })
                .note(format!("{refusal}, so the container never starts"));
            let finding = match &quoted {
                Some(csv) => finding.help(format!(
                    "the Docker CLI reads `--gpus` as CSV: quote the device list, `--gpus '{csv}'`"
                )),
                None => finding.help("keep either `device=` or `count=`"),
            };
            finding.fix(fix);
        }
    }
}

/// `device=0,1` (with bare fields after it, which the CLI reads as a
/// count) rewritten as the CSV field `"device=0,1"`; `None` when the
/// value is not that mistake (it already holds quotes, or sets `count=`).
fn quoted_device_list(value: &str) -> Option<String> {
    if value.contains('"') {
        return None;
    }
    let fields: Vec<&str> = value.split(',').collect();
    let at = fields.iter().position(|f| f.starts_with("device="))?;
    let list_end = fields[at + 1..]
        .iter()
        .position(|f| f.contains('='))
        .map_or(fields.len(), |p| at + 1 + p);
    let mut out: Vec<String> = fields[..at].iter().map(|f| f.to_string()).collect();
    out.push(format!("\"{}\"", fields[at..list_end].join(",")));
    out.extend(fields[list_end..].iter().map(|f| f.to_string()));
    let csv = out.join(",");
    // The quoted request must be one the daemon takes.
    parse_gpus(&csv)
        .ok()
        .filter(|r| r.start_refusal().is_none())
        .map(|_| csv)
}

#[cfg(test)]
mod tests {
    use super::quoted_device_list;

    #[test]
    fn the_device_list_is_quoted_as_csv() {
        assert_eq!(
            quoted_device_list("device=0,1").as_deref(),
            Some("\"device=0,1\"")
        );
        assert_eq!(
            quoted_device_list("driver=nvidia,device=0,1,2,capabilities=compute").as_deref(),
            Some("driver=nvidia,\"device=0,1,2\",capabilities=compute")
        );
        // A count written as a key is the author's: no guess.
        assert_eq!(quoted_device_list("device=0,count=2"), None);
        assert_eq!(quoted_device_list("\"device=0,1\",count=2"), None);
    }
}

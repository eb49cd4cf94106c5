//! GPU001: a device request with both `count` and `device_ids`.

use crate::fix::Applicability;
use crate::rules::helpers::device_request_site;
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::compose(check);

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

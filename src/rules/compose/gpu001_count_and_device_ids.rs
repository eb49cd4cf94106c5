//! GPU001: a device request with both `count` and `device_ids`.

use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::Compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        for request in &service.device_requests {
            let (Some(count), Some(ids)) = (&request.count, &request.device_ids) else {
                continue;
            };
            out.report(
                cx.setting_range(count),
                format!("GPU request of service `{}` sets both `count` and `device_ids`", service.name),
            )
            .label("remove this or `device_ids`")
            .related(cx.setting_range(ids), "`device_ids` already says which GPUs")
            .note("Compose refuses the file: `\"count\" and \"device_ids\" attributes are exclusive`")
            .help("keep `device_ids` to pin specific GPUs, or `count` to take any N of them");
        }
    }
}

//! SHM003: a `shm_size` Compose rejects, or a bare number that means bytes.

use crate::diagnostic::Severity;
use crate::model::size::{HumanBytes, MIB, SizeValue};
use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(shm) = &service.shm_size else { continue };
        let range = cx.range(shm.node);
        match &shm.value {
            SizeValue::Invalid { reason, .. } => {
                out.report(range, format!("`shm_size` of service `{}` is not a valid size: {reason}", service.name))
                    .severity(Severity::Error)
                    .note("`docker compose` refuses to load the file")
                    .help("write a number with a unit: \"512mb\", \"8gb\"");
            }
            SizeValue::Negative(n) => {
                out.report(range, format!("`shm_size: {n}` of service `{}` is negative", service.name))
                    .severity(Severity::Error)
                    .note("the engine refuses to create the container: `SHM size can not be less than 0`")
                    .help("write a positive size with a unit: \"8gb\"");
            }
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

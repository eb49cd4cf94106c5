//! PROJ001: a service Compose cannot build from its project: an `extends`
//! cycle, an `extends` naming a service or file that is not there, or a
//! required `env_file` that is missing. Compose refuses the whole project.

use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    for service in cx.services() {
        let Some(why) = &service.inherited.error else {
            continue;
        };
        // At the key that names what cannot be resolved.
        let yaml = cx.file.yaml;
        let at = if why.starts_with("`env_file`") {
            yaml.get(service.map, "env_file").map(|e| e.key)
        } else {
            service.extends.as_ref().map(|e| e.key)
        }
        .unwrap_or(service.key);
        out.report(
            cx.range(at),
            format!("Compose cannot load service `{}`: {why}", service.name),
        )
        .note("`docker compose up` (and `config`) fails before any container is created")
        .help("fix the `extends` chain or the file it names, or create the `env_file` (or mark it `required: false`)");
    }
}

//! PROJ001: a service Compose cannot build from its project: an `extends`
//! cycle, an `extends` naming a service its file does not define, a
//! service an `include:`d file also defines, an `include:` cycle, or an
//! `include:` whose `env_file` is missing.
//! Compose refuses the whole project. A file that is simply not here (a
//! gitignored `.env`) is not reported.

use crate::rules::{Check, ComposeContext, Reporter};

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    if let Some((node, why)) = &cx.file.include_error {
        out.report(
            cx.range(*node),
            format!("Compose cannot load this project: {why}"),
        )
        .note("`docker compose up` (and `config`) fails before any container is created")
        .help("fix the `include` entry or the file it names");
    }
    for service in cx.services() {
        let Some(why) = &service.inherited.error else {
            continue;
        };
        // A file that is not here (a gitignored `.env`, a base not copied
        // with a lone file) is not a mistake in the config; `inspect` says
        // Compose refuses it here.
        if service.inherited.error_is_missing_file {
            continue;
        }
        // At the key that names what cannot be resolved.
        let yaml = cx.file.yaml;
        let at = if why.starts_with("`env_file`") {
            yaml.get(service.map, "env_file").map(|e| e.key)
        } else if why.starts_with("`include`") {
            Some(service.key)
        } else {
            service.extends.as_ref().map(|e| e.key)
        }
        .unwrap_or(service.key);
        out.report(
            cx.range(at),
            format!("Compose cannot load service `{}`: {why}", service.name),
        )
        .note("`docker compose up` (and `config`) fails before any container is created")
        .help("fix the `extends` chain or the service it names, or rename the service that an included file also defines");
    }
}

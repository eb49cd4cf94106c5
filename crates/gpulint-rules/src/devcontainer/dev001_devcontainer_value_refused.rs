//! DEV001: a setting of a `devcontainer.json` that the dev container
//! specification's schema does not allow: a value of the wrong type or
//! outside its choices, or an unknown property inside an object the spec
//! defines (`hostRequirements`, `build`, a mount).

use crate::{Check, Reporter, ScriptContext};
use gpulint_schema::devcontainer::{self, SPEC_COMMIT};

crate::declare_rule! {
    name: "devcontainer-value-refused",
    severity: Warning,
    fix: None,
    summary: "A dev container setting the specification's schema does not allow: a wrong type, a value outside its choices, or an unknown property of an object the spec defines",
    sources: [
        "the dev container specification's schema, devContainer.base.schema.json (devcontainers/spec), which VS Code validates devcontainer.json against",
        "containers.dev/implementors/json_reference: each property's type and values",
    ],
}

pub const CHECK: Check = Check::commands(check);

fn check(cx: &ScriptContext, out: &mut Reporter) {
    let Some(dev) = cx.script.devcontainer.as_deref() else {
        return;
    };
    for error in devcontainer::validate(&dev.json.root) {
        let help = if error.unknown_property {
            "check its spelling and its level: the object takes only the properties the spec lists (containers.dev/implementors/json_reference)"
        } else {
            "write the value in the shape the spec gives the setting (containers.dev/implementors/json_reference)"
        };
        let setting = &error.path[0];
        out.report(
            error.range,
            format!("the dev container spec does not allow this: {}", error.message),
        )
        .label("not in the spec's schema")
        .note(format!(
            "the Dev Container CLI and VS Code read `{setting}` in the shape the spec's schema gives it (devContainer.base.schema.json, devcontainers/spec {SPEC_COMMIT}); what they do with another shape is not defined, and a property they do not know is ignored, so what it asks for is not done"
        ))
        .help(help);
    }
}

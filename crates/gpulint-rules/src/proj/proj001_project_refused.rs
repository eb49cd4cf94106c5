//! PROJ001: what makes Compose refuse the project, at the value that
//! causes it: an `extends` it cannot resolve, an `include` it cannot
//! import, a `.env` it cannot parse, a reference to an undefined volume,
//! network, secret, config or service, two mounts at one target, a device
//! request it cannot read, a value it cannot interpolate, a file it names
//! that is there but cannot be read (permission denied, a directory). A
//! file that is only missing from this checkout (a gitignored `.env`) is
//! not reported
//! (`inspect` says Compose refuses the project here). What only the shell
//! can settle (`${VAR?}`, a size left empty, a service in a profile that
//! is not enabled) is information that says so, as is a network that no
//! file of the project declares when it declares none: a base merged with
//! it where Compose runs may (an app store's apps).

use crate::diagnostic::{At, Severity};
use crate::project::{FileRole, Place, RefusalKind};
use crate::text::TextRange;
use crate::{Check, ComposeContext, Reporter};

crate::declare_rule! {
    name: "project-refused",
    severity: Error,
    fix: None,
    summary: "Compose refuses the project: an `extends` or `include` it cannot resolve, a `.env` it cannot parse, an undefined volume, network, secret, config or service, two mounts at one target, a device request it cannot read",
    sources: [
        "compose-spec/compose-go v2.9.1 `schema/compose-spec.json` and `schema/schema.go` (what the schema refuses, in its words; vendored in crates/gpulint-schema)",
        "compose-spec/compose-go v2.9.1 `loader/extends.go` (cycle and missing-service errors)",
        "compose-spec/compose-go v2.9.1 `loader/include.go` (include cycles, `conflicts with imported resource`)",
        "compose-spec/compose-go v2.9.1 `loader/validate.go` `checkConsistency` (undefined references, duplicate mount targets)",
        "compose-spec/compose-go v2.9.1 `dotenv/parser.go`, `template/template.go` (`.env` and interpolation errors)",
    ],
}

pub const CHECK: Check = Check::compose(check);

fn check(cx: &ComposeContext, out: &mut Reporter) {
    // What only the shell settles is said once per project and variable
    // (one `${VAR:?}` guard written in eleven places is one question).
    let mut asked = std::collections::HashSet::new();
    // A declared fragment (`[compose] fragments`) is merged with a base
    // that defines what it refers to: those references are the base's.
    let fragment = cx
        .settings
        .compose_fragments
        .as_ref()
        .is_some_and(|fragments| {
            cx.project
                .spec
                .files
                .iter()
                .any(|file| fragments.contains(file))
        });
    for refusal in &cx.project.refusals {
        let undefined_reference = refusal.names_undefined();
        if fragment && undefined_reference {
            continue;
        }
        let severity = match refusal.kind {
            RefusalKind::Config => Severity::Error,
            // A required variable (`${VAR:?msg}`), a profile to enable: a
            // deliberate design as often as a mistake, decided at run time.
            RefusalKind::UnlessShellSets if asked.insert(refusal.message.as_str()) => {
                Severity::Info
            }
            RefusalKind::UnlessShellSets => continue,
            RefusalKind::UnlessMerged if asked.insert(refusal.message.as_str()) => Severity::Info,
            RefusalKind::UnlessMerged => continue,
            RefusalKind::MissingFile | RefusalKind::ConfigReportedBy(_) => continue,
        };
        let at = match refusal.at {
            Place::Node(src) => cx.range(src),
            Place::Text { file, range } => At {
                range,
                file: Some(cx.source_file(file).clone()),
            },
        };
        // A `.env` or `env_file` Compose cannot read is no file an editor
        // lints: the finding is on the project's first compose file (its
        // first line), pointing at the line that is refused.
        let in_env_file = cx
            .project
            .files
            .get(refusal.at.file() as usize)
            .is_some_and(|f| f.role == FileRole::Env);
        let first_compose_file = cx
            .project
            .files
            .iter()
            .position(|f| f.role == FileRole::Project);
        let (at, env_line) = match first_compose_file {
            Some(compose) if in_env_file => {
                let source = cx.source_file(compose as u32);
                let first_line = source.text.find('\n').unwrap_or(source.text.len());
                let home = At {
                    range: TextRange::new(0, first_line),
                    file: Some(source.clone()),
                };
                (home, Some(at))
            }
            _ => (at, None),
        };
        let (message, note) = match refusal.kind {
            RefusalKind::UnlessShellSets => (
                format!("Compose may refuse this project: {}", refusal.message),
                "`docker compose up` (and `config`) fails before any container is created when the shell does not settle it",
            ),
            RefusalKind::UnlessMerged => (
                format!("Compose refuses this file alone: {}", refusal.message),
                "`docker compose up` fails unless a file merged with this one (`-f base.yml -f this.yml`, an app store's base) declares it; which files are merged is chosen where Compose runs, so gpulint cannot know",
            ),
            _ => (
                format!("Compose cannot load this project: {}", refusal.message),
                "`docker compose up` (and `config`) fails before any container is created",
            ),
        };
        let mut finding = out.report(at, message).severity(severity).note(note);
        if let Some(line) = env_line {
            finding = finding.related(line, "Compose stops reading here");
        }
        finding.help(if refusal.kind == RefusalKind::UnlessMerged {
            "when the project runs on its own, declare the network under the top-level `networks:` (`external: true` for one another project creates); when it is merged with a base, say so in gpulint.toml: `[compose] fragments = [\"apps/*/docker-compose.yml\"]`"
        } else if undefined_reference {
            "define what it names, or fix the reference; if another tool merges this file with its own base that defines it (an app store's apps), declare such files in gpulint.toml: `[compose] fragments = [\"apps/*/docker-compose.yml\"]`"
        } else {
            "fix the value this points at (or the file or service it names)"
        });
    }
}

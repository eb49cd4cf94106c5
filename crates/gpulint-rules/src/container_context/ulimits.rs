//! A site's ulimits: where each is written and the fix that raises one.

use super::*;

impl<'a> ContainerSite<'a> {
    /// The ulimit `name` as written, the one that applies.
    pub fn ulimit(&self, name: &str) -> Option<UlimitSetting> {
        match &self.place {
            Place::Service { cx, service } => {
                let limit = service_ulimit(service, name)?;
                Some(UlimitSetting {
                    at: cx.entry_range(limit.key, limit.value_node),
                    unlimited: limit.is_unlimited(),
                    soft_unlimited: limit.soft == Some(-1),
                    dynamic: false,
                })
            }
            Place::Run { site, .. } => {
                let option = run_ulimit(site, name)?;
                let value = option.value.as_deref().unwrap_or("");
                let limit = value.strip_prefix(name).and_then(|v| v.strip_prefix('='));
                Some(UlimitSetting {
                    at: option.range.into(),
                    unlimited: matches!(limit, Some("-1" | "-1:-1")),
                    // `soft[:hard]`, as the Docker CLI reads it.
                    soft_unlimited: limit.is_some_and(|l| l.split(':').next() == Some("-1")),
                    dynamic: option.dynamic,
                })
            }
            // A pod spec has no ulimits: the container runtime's service
            // limits decide.
            Place::Pod { .. } => None,
        }
    }

    /// How the ulimit `name` is set to `value` in this container's syntax,
    /// for help texts: "add `ulimits: {memlock: -1}` (or `memlock: {soft:
    /// -1, hard: -1}`)", "add `--ulimit memlock=-1`".
    pub(crate) fn ulimit_help(&self, name: &str, value: &str) -> String {
        match &self.place {
            Place::Service { .. } => format!(
                "add `ulimits: {{{name}: {value}}}` (or `{name}: {{soft: {value}, hard: {value}}}`)"
            ),
            Place::Run { .. } => format!("add `--ulimit {name}={value}`"),
            Place::Pod { .. } => format!(
                "a pod spec sets no ulimits: set `{name}` to {value} in the container runtime's service limits"
            ),
        }
    }

    /// The ulimit `name` set to `value` as this syntax writes it, for
    /// labels and help texts: "`stack: -1`", "`--ulimit stack=-1`".
    pub(crate) fn ulimit_written(&self, name: &str, value: &str) -> String {
        match &self.place {
            Place::Service { .. } => format!("`{name}: {value}`"),
            Place::Run { .. } | Place::Pod { .. } => format!("`--ulimit {name}={value}`"),
        }
    }

    /// A fix that sets the ulimit `name` to `value` (which `means`, in
    /// words, for the title: "unlimited", "64 MiB"): the written setting
    /// rewritten (both `soft` and `hard` of a long form), or a new one
    /// added. `None` where no plain edit can (a value written with
    /// variables, or a later compose file that resets `ulimits`).
    pub(crate) fn set_ulimit_fix(&self, name: &str, value: &str, means: &str) -> Option<Fix> {
        match &self.place {
            Place::Service { cx, service } => {
                let title = format!("Set `ulimits.{name}` to {value} ({means})");
                match service_ulimit(service, name) {
                    None => cx.insert_fix(
                        service,
                        &["ulimits", name],
                        NewNode::scalar(value),
                        title,
                        Applicability::Safe,
                    ),
                    Some(limit) if cx.is_extended_from_base(service, limit.key) => cx.insert_fix(
                        service,
                        &["ulimits", name],
                        NewNode::scalar(value),
                        format!("{title}, over the value `{}` extends", service.name),
                        Applicability::Safe,
                    ),
                    Some(limit) => set_ulimit_edits(cx, limit, value).and_then(|edits| {
                        cx.edit_fix(
                            service,
                            limit.key,
                            &["ulimits", name],
                            edits,
                            &[&["ulimits", name]],
                            title,
                            Applicability::Safe,
                        )
                    }),
                }
            }
            Place::Run { cx, site } => {
                let option_text = format!("{name}={value}");
                match run_ulimit(site, name) {
                    None => cx
                        .insert_option(site, &format!("--ulimit {option_text}"))
                        .map(|edit| {
                            cx.run_fix(
                                site,
                                format!("Add `--ulimit {option_text}`"),
                                Applicability::Safe,
                                vec![edit],
                            )
                        }),
                    // Replaced when written plainly.
                    Some(option) => option
                        .value_range
                        .filter(|r| cx.text.get(r.as_range()) == option.value.as_deref())
                        .map(|range| {
                            cx.run_fix(
                                site,
                                format!("Set `--ulimit {option_text}`"),
                                Applicability::Safe,
                                vec![Edit {
                                    range,
                                    content: option_text.clone(),
                                }],
                            )
                        }),
                }
            }
            Place::Pod { .. } => None,
        }
    }
}

pub(super) fn service_ulimit<'s>(
    service: &'s Service,
    name: &str,
) -> Option<&'s crate::model::compose::Ulimit> {
    match name {
        "memlock" => service.ulimits.memlock.as_ref(),
        "stack" => service.ulimits.stack.as_ref(),
        _ => service
            .ulimits
            .others
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, limit)| limit),
    }
}

/// The last `--ulimit name=…` of a run: the one the engine applies.
pub(super) fn run_ulimit<'s>(site: &'s RunSite, name: &str) -> Option<&'s RunOption> {
    site.run
        .options_named("--ulimit")
        .filter(|(_, o)| {
            o.value
                .as_deref()
                .and_then(|v| v.strip_prefix(name))
                .is_some_and(|rest| rest.starts_with('='))
        })
        .map(|(_, o)| o)
        .last()
}

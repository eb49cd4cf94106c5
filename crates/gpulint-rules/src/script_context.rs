//! What a rule sees of a file that runs commands (a shell or batch script, a
//! Makefile, Markdown, a workflow) and how it builds fixes: text edits
//! inside one `docker run`, whose intended change is that command (or, in a
//! workflow, the `run:` step holding it).

use super::RuleSettings;
use crate::fix::{Applicability, Edit, Fix, ModelPath};
use crate::model::container::{ContainerRuntime, Containers};
use crate::model::devcontainer::DevContainer;
use crate::model::docker_run::RunOption;
use crate::model::script::{OptionsAt, RunSite, Script};
use crate::model::script_env::{ScriptEnv, SetBy};
use crate::syntax::{jsonc, shell};
use crate::text::TextRange;

pub struct ScriptContext<'a> {
    pub script: &'a Script,
    pub text: &'a str,
    pub settings: &'a RuleSettings,
    /// What each `docker run` gives its container: the model `gpulint
    /// inspect` prints, which the rules judge.
    pub containers: Containers,
    /// Which commands hold which, worked out once: one fix per `docker
    /// run` of a long script must not each scan every command.
    holders: std::cell::OnceCell<Holders>,
}

impl<'a> ScriptContext<'a> {
    pub fn new(script: &'a Script, text: &'a str, settings: &'a RuleSettings) -> ScriptContext<'a> {
        ScriptContext {
            script,
            text,
            settings,
            containers: Containers::new(crate::model::adapters::command_runtimes(script)),
            holders: std::cell::OnceCell::new(),
        }
    }

    /// Command `n` and the commands holding it in their range, in order.
    fn holders_of(&self, n: usize) -> Vec<usize> {
        self.holders
            .get_or_init(|| Holders::of(&self.script.commands))
            .of_command(n)
    }

    /// What the `docker run` of `site` gives its container.
    pub fn container(&self, site: &RunSite) -> &ContainerRuntime {
        self.containers
            .named_at(site.run.program_range)
            .expect("every `docker run` is a container of the model")
    }

    /// A fix that sets the value of `option`, on the `docker run` of `site`,
    /// to `new_value`. A value written bare or inside one pair of quotes
    /// keeps that spelling; `None` for one written any other way (escapes,
    /// variables, several quoted parts), which a fix leaves to the author.
    pub(crate) fn set_option_value(
        &self,
        site: &RunSite,
        option: &RunOption,
        new_value: &str,
        title: impl Into<String>,
        applicability: Applicability,
    ) -> Option<Fix> {
        let (value, range) = (option.value.as_deref()?, option.value_range?);
        if option.dynamic {
            return None;
        }
        let written = self.text.get(range.as_range())?;
        let plain_word = !new_value.is_empty()
            && new_value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/:=,._%+-@".contains(&b));
        let content = if written == value {
            plain_word.then(|| new_value.to_string())
        } else {
            ['\'', '"'].into_iter().find_map(|quote| {
                let inner = written.strip_prefix(quote)?.strip_suffix(quote)?;
                (inner == value && plain_word).then(|| format!("{quote}{new_value}{quote}"))
            })
        }?;
        Some(self.run_fix(site, title, applicability, vec![Edit { range, content }]))
    }

    /// A fix made of `edits` to the command of `site`.
    pub(crate) fn run_fix(
        &self,
        site: &RunSite,
        title: impl Into<String>,
        applicability: Applicability,
        edits: Vec<Edit>,
    ) -> Fix {
        if let Some(dev) = &self.script.devcontainer {
            return Fix::new(
                title,
                applicability,
                edits.clone(),
                devcontainer_paths(dev, &edits),
            );
        }
        let snippet = &self.script.snippets[site.snippet];
        let paths = match &snippet.yaml_path {
            Some(path) => vec![ModelPath(path.clone())],
            None => {
                // The command, and those whose words hold it in a command
                // substitution (`CID=$(docker run …)`): they change with it.
                self.holders_of(site.command)
                    .iter()
                    .map(|n| ModelPath::new(["command".to_string(), n.to_string()]))
                    .collect()
            }
        };
        Fix::new(title, applicability, edits, paths).in_document(snippet.yaml_document)
    }

    /// An option inserted right after `run` (`docker run --shm-size=8gb …`);
    /// in a `devcontainer.json`, first in `runArgs` as JSON strings, one
    /// per word (`"--ulimit", "memlock=-1"`), `runArgs` added when missing.
    /// In a workflow's job or service container, first in `options:`;
    /// `None` where no plain edit can add it.
    pub(crate) fn insert_option(&self, site: &RunSite, option: &str) -> Option<Edit> {
        let Some(dev) = &self.script.devcontainer else {
            // A quote the command leaves open (or closes past a line it
            // then runs on into) makes where its words end a guess: no
            // edit is offered on a guess.
            if !shell::quotes_close(self.text.get(site.run.range.as_range())?) {
                return None;
            }
            return match &site.options_at {
                OptionsAt::AfterRun => Some(Edit::insert(
                    site.run.subcommand.range.end,
                    format!(" {option}"),
                )),
                OptionsAt::Before(at) => Some(Edit::insert(*at as u32, format!("{option} "))),
                // `PodmanArgs=` since Quadlet's first release (Podman 4.4);
                // `ShmSize=` and `Ulimit=` only since 4.7, and an older
                // generator refuses a key it does not know.
                OptionsAt::UnitLine(at) => {
                    Some(Edit::insert(*at as u32, format!("\nPodmanArgs={option}")))
                }
                OptionsAt::Nowhere => None,
            };
        };
        let items: Vec<String> = option.split(' ').map(jsonc::quote).collect();
        let (at, content) = match dev.run_args() {
            Some(array) => jsonc::prepend_items(self.text, array, &items),
            None => jsonc::append_member(
                self.text,
                &dev.json.root,
                "runArgs",
                &format!("[{}]", items.join(", ")),
            ),
        };
        Some(Edit::insert(at as u32, content))
    }

    /// `value` as one word of this file's syntax: single-quoted for the
    /// shell, a JSON string's text in a `devcontainer.json`.
    pub(crate) fn literal_word(&self, value: &str) -> Option<String> {
        if self.script.devcontainer.is_some() {
            let quoted = jsonc::quote(value);
            return Some(quoted[1..quoted.len() - 1].to_string());
        }
        (!value.contains('\'')).then(|| format!("'{value}'"))
    }

    /// A fix that deletes one option and the blanks after it; a workflow
    /// container's `-e` from its `env:` is the YAML entry, removed as YAML
    /// (`None` where that cannot be done plainly).
    pub(crate) fn remove_option_fix(
        &self,
        site: &RunSite,
        option: &RunOption,
        title: impl Into<String>,
        applicability: Applicability,
    ) -> Option<Fix> {
        // An option a variable (`$FLAGS`) or an `--env-file` holds is not
        // written at the run: deleting what is there would delete the
        // variable or the file's option, and whatever else they hold.
        if option.via.is_some() {
            return None;
        }
        if let Some(dev) = &self.script.devcontainer
            && let Some(ranges) = devcontainer_removal(self.text, dev, option.range)
        {
            let edits = ranges.into_iter().map(Edit::delete).collect();
            return Some(self.run_fix(site, title, applicability, edits));
        }
        if let Some(entry) = self
            .script
            .workflow_env
            .iter()
            .find(|e| e.range == option.range)
        {
            let edit = entry.removal.clone()?;
            return Some(self.run_fix(site, title, applicability, vec![edit]));
        }
        // A Quadlet setting whose whole value is the option goes with its
        // line: an empty `Environment=` would reset the earlier ones.
        if let Some(unit) = &self.script.quadlet
            && let Some(setting) = unit.setting_at(option.range)
            && self.text.get(option.range.as_range()).map(str::trim) == Some(setting.value.as_str())
        {
            return Some(self.run_fix(
                site,
                title,
                applicability,
                vec![Edit::delete(setting.line)],
            ));
        }
        let (start, end) = (option.range.start as usize, option.range.end as usize);
        // A quote the option leaves open runs past it: removing the option
        // would take, or re-join, the text after it.
        if !shell::quotes_close(self.text.get(start..end)?) {
            return None;
        }
        let after = &self.text[end..];
        let blanks = after.len() - after.trim_start_matches([' ', '\t']).len();
        let line_start = self.text[..start].rfind('\n').map_or(0, |n| n + 1);
        let alone = self.text[line_start..start].trim().is_empty();
        let continued = ["\\\n", "\\\r\n"]
            .iter()
            .find(|c| after[blanks..].starts_with(**c));
        // An option on a continued line of its own goes with its line.
        // Last in its text (`options: "--gpus all -e A=1"`): the blanks
        // before it go instead.
        let before = start - self.text[..start].trim_end_matches([' ', '\t']).len();
        // An option alone on a line of a multi-line text (a folded
        // `options: >-`) goes with its line.
        let line_end = ["\n", "\r\n"]
            .iter()
            .find(|nl| after[blanks..].starts_with(**nl));
        // An option alone on the last line of a continued command: the
        // previous line's `\` goes with it, or it would continue into the
        // next command.
        let ends_continuation = self.text[..line_start]
            .strip_suffix('\n')
            .map(|t| t.strip_suffix('\r').unwrap_or(t))
            .and_then(|t| t.strip_suffix('\\'))
            .map(|t| t.trim_end_matches([' ', '\t']).len());
        let range = match (continued, line_end, ends_continuation) {
            (None, _, Some(kept))
                if alone && (line_end.is_some() || after[blanks..].is_empty()) =>
            {
                TextRange::new(kept, end + blanks)
            }
            (Some(c), _, _) | (None, Some(c), _) if alone => {
                TextRange::new(line_start, end + blanks + c.len())
            }
            (None, _, _) if blanks == 0 && !alone => TextRange::new(start - before, end),
            _ => TextRange::new(start, end + blanks),
        };
        Some(self.run_fix(site, title, applicability, vec![Edit::delete(range)]))
    }

    /// The `NCCL_*` settings of the script that reach a process it starts:
    /// all of them when it runs no container, else only those a `docker
    /// run` passes through (`-e NAME` without a value) and command prefixes.
    pub fn script_env(&self) -> impl Iterator<Item = &'a ScriptEnv> + 'a {
        let script = self.script;
        script.nccl_env.iter().filter(move |setting| {
            setting.set_by == SetBy::Prefix
                || script.runs.is_empty()
                || script.runs.iter().any(|site| {
                    site.run
                        .env()
                        .any(|(name, value, _)| name == setting.name && value.is_none())
                })
        })
    }

    /// "the container started by `docker run`", for messages.
    pub(crate) fn describe_run(site: &RunSite) -> String {
        format!("the container started by `{}`", site.run.invocation())
    }
}

/// What a fix to a `devcontainer.json` changes: the top-level members its
/// edits fall in (`runArgs`, `containerEnv`), `runArgs` for one that adds it.
fn devcontainer_paths(dev: &DevContainer, edits: &[Edit]) -> Vec<ModelPath> {
    let members = dev.json.root.as_object().unwrap_or(&[]);
    let mut paths: Vec<ModelPath> = edits
        .iter()
        .map(|edit| {
            let key = members
                .iter()
                .find(|m| {
                    let range = m.range();
                    // Strictly inside: an insertion at a member's end is
                    // a new member after it.
                    range.start < edit.range.start && edit.range.end < range.end
                })
                .map_or("runArgs", |m| m.key.as_str());
            ModelPath::new([key])
        })
        .collect();
    paths.sort_by(|a, b| a.0.cmp(&b.0));
    paths.dedup();
    paths
}

/// The ranges that remove an option of a dev container (`runArgs` items,
/// or a `containerEnv` member), whose words lie within `range`.
fn devcontainer_removal(
    text: &str,
    dev: &DevContainer,
    range: TextRange,
) -> Option<Vec<TextRange>> {
    let within = |r: TextRange| range.start <= r.end && r.start <= range.end;
    let containers: [Vec<TextRange>; 2] = [
        dev.run_args()
            .and_then(|v| v.as_array())
            .unwrap_or(&[])
            .iter()
            .map(|v| v.range)
            .collect(),
        dev.json
            .root
            .get("containerEnv")
            .and_then(|v| v.as_object())
            .unwrap_or(&[])
            .iter()
            .map(|m| m.range())
            .collect(),
    ];
    containers.iter().find_map(|items| {
        let first = items.iter().position(|r| within(*r))?;
        let last = items.iter().rposition(|r| within(*r))?;
        Some(jsonc::remove_items(text, items, first, last))
    })
}

/// Which commands hold which: each command's innermost holder (another
/// command of its snippet whose range holds its range), and the commands
/// that share their range with others.
struct Holders {
    parent: Vec<Option<usize>>,
    same_range: foldhash::HashMap<usize, Vec<usize>>,
}

impl Holders {
    /// Commands nest (a command substitution inside a word) or are apart,
    /// so, taken by start (the outer first at a tie), the ones still open
    /// when a command starts are those that hold it, the innermost on top:
    /// a stack, n log n for the sort.
    fn of(commands: &[(usize, crate::syntax::shell::Command)]) -> Holders {
        let ranges: Vec<(usize, TextRange)> = commands
            .iter()
            .map(|(snippet, command)| (*snippet, command.range()))
            .collect();
        let mut order: Vec<usize> = (0..commands.len()).collect();
        order.sort_by_key(|&n| {
            let (snippet, range) = ranges[n];
            (snippet, range.start, std::cmp::Reverse(range.end), n)
        });
        let holds = |outer: usize, inner: usize| {
            let ((s1, a), (s2, b)) = (ranges[outer], ranges[inner]);
            s1 == s2 && a.start <= b.start && b.end <= a.end
        };
        let mut parent = vec![None; commands.len()];
        let mut open: Vec<usize> = Vec::new();
        for n in order {
            while open.last().is_some_and(|&top| !holds(top, n)) {
                open.pop();
            }
            parent[n] = open.last().copied();
            open.push(n);
        }
        let mut by_range: foldhash::HashMap<(usize, TextRange), Vec<usize>> =
            foldhash::HashMap::default();
        for (n, key) in ranges.iter().enumerate() {
            by_range.entry(*key).or_default().push(n);
        }
        let same_range = by_range
            .into_values()
            .filter(|same| same.len() > 1)
            .flat_map(|same| same.clone().into_iter().map(move |n| (n, same.clone())))
            .collect();
        Holders { parent, same_range }
    }

    /// Command `n` and every command holding it, in command order.
    fn of_command(&self, n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = Some(n);
        while let Some(command) = at {
            out.push(command);
            if let Some(same) = self.same_range.get(&command) {
                out.extend(same);
            }
            at = self.parent[command];
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::script::ScriptKind;

    #[test]
    fn holders_are_the_commands_whose_range_holds_the_command() {
        let text = "A=$(docker run --rm $(cat id) x) && docker run y\necho \"$(docker run z $(a $(b)))\" $(c)\n";
        let script = Script::read(text, ScriptKind::Shell, None);
        assert!(script.commands.len() >= 8, "{:?}", script.commands.len());
        let holders = Holders::of(&script.commands);
        for (n, (snippet, command)) in script.commands.iter().enumerate() {
            let own = command.range();
            let scanned: Vec<usize> = script
                .commands
                .iter()
                .enumerate()
                .filter(|(_, (s, c))| {
                    let range = c.range();
                    s == snippet && range.start <= own.start && own.end <= range.end
                })
                .map(|(m, _)| m)
                .collect();
            assert_eq!(holders.of_command(n), scanned, "command {n}");
        }
    }
}

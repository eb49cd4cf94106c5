//! The values a script's own assignments give its variables, so that a
//! `docker run` line can read past `$FLAG` when the script says what
//! `FLAG` holds (`FLAG=""` on one branch, `FLAG="-it"` on the other).
//!
//! Arrays count too: `RDMA_FLAGS=()` on one branch and
//! `RDMA_FLAGS=(--device=/dev/infiniband --cap-add=IPC_LOCK)` on the
//! other, read where `"${RDMA_FLAGS[@]}"` is written.
//!
//! Only what the script itself writes counts: a variable it never assigns
//! comes from the caller's environment and stays unknown, and so does one
//! it assigns from an expansion (`FLAG="$OTHER -it"`), appends to
//! (`FLAG+=" -d"`), reads (`read FLAG`) or loops over (`for FLAG in ...`).
//! Every assignment before the command, on any branch, is a value the
//! variable can hold there; assignments in other snippets (another Markdown
//! code block, another workflow step) are another shell's.

use crate::syntax::shell::{Command, Word};

#[derive(Debug, Clone, Default)]
pub(crate) struct ScriptVariables {
    assignments: Vec<Assignment>,
}

#[derive(Debug, Clone)]
struct Assignment {
    snippet: usize,
    /// The index of the command that assigns it (over the whole file).
    command: usize,
    name: String,
    /// `None` when the value is only known at run time.
    value: Option<Value>,
}

/// What an assignment gives a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `NAME=value`.
    Scalar(String),
    /// `NAME=(a b c)`: the elements, quotes removed.
    Array(Vec<String>),
}

/// A variable where a word is written, with every value the script gives
/// it there, each as the words it becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    pub name: String,
    pub values: Vec<Vec<String>>,
}

/// Builtins whose `NAME=value` arguments assign shell variables.
const DECLARING: &[&str] = &["export", "local", "declare", "typeset", "readonly"];

impl ScriptVariables {
    /// The assignments of `commands` (each with its snippet), in order;
    /// `text` is the host file the commands' ranges are in (an array
    /// assignment `NAME=(...)` is found there: the shell lexer ends the
    /// command at its parenthesis).
    pub fn read(commands: &[(usize, Command)], text: &str) -> ScriptVariables {
        let mut assignments = Vec::new();
        for (n, (snippet, command)) in commands.iter().enumerate() {
            let mut assign = |name: &str, value: Option<Value>| {
                assignments.push(Assignment {
                    snippet: *snippet,
                    command: n,
                    name: name.to_string(),
                    value,
                });
            };
            // `then FLAG=-it`, `do X=1`: the keyword opens a compound
            // command; what follows is a command of its own.
            let opened = command
                .words
                .iter()
                .take_while(|w| matches!(w.text.as_str(), "then" | "else" | "do" | "{" | "!"))
                .count();
            let words = &command.words[opened..];
            let leading = words
                .iter()
                .take_while(|w| w.assigned_name().is_some() || appended_name(w).is_some())
                .count();
            let rest = &words[leading..];
            // `A=1 B=2` alone assigns; `A=1 cmd` sets A for cmd only.
            if rest.is_empty() {
                for word in &words[..leading] {
                    match array_elements(word, text, &commands[n + 1..], *snippet) {
                        Some(elements) => assign(word.assigned_name().unwrap_or(""), elements),
                        None => assign_word(word, &mut assign),
                    }
                }
                continue;
            }
            let program = rest[0].text.as_str();
            let arguments = &rest[1..];
            if DECLARING.contains(&program) {
                for word in arguments.iter().filter(|w| !w.text.starts_with('-')) {
                    match array_elements(word, text, &commands[n + 1..], *snippet) {
                        Some(elements) => assign(word.assigned_name().unwrap_or(""), elements),
                        None => assign_word(word, &mut assign),
                    }
                }
            } else if program == "for" {
                if let Some(name) = arguments.first().filter(|w| is_name(&w.text)) {
                    assign(&name.text, None);
                }
            } else if matches!(program, "read" | "getopts" | "mapfile" | "readarray") {
                for word in arguments.iter().filter(|w| is_name(&w.text)) {
                    assign(&word.text, None);
                }
            } else if program == "printf"
                && let Some(at) = arguments.iter().position(|w| w.text == "-v")
                && let Some(name) = arguments.get(at + 1)
            {
                assign(&name.text, None);
            } else if program == "unset" {
                for word in arguments.iter().filter(|w| is_name(&w.text)) {
                    assign(&word.text, Some(Value::Scalar(String::new())));
                }
            }
        }
        ScriptVariables { assignments }
    }

    /// Every value `name` can hold at command `at` of `snippet`, in the
    /// order the script assigns them; `None` when the script does not say
    /// (never assigned there, or assigned something only known at run time).
    pub fn values(&self, name: &str, snippet: usize, at: usize) -> Option<Vec<Value>> {
        let mut values: Vec<Value> = Vec::new();
        for a in self
            .assignments
            .iter()
            .filter(|a| a.snippet == snippet && a.command < at && a.name == name)
        {
            let value = a.value.as_ref()?;
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        (!values.is_empty()).then_some(values)
    }

    /// The variable `word` is (`$FLAG`, `"${ARGS[@]}"`), with the words
    /// each value the script gives it becomes there; `None` for any other
    /// word, or a variable the script does not say the value of.
    pub fn expand(&self, word: &Word, snippet: usize, at: usize) -> Option<Expanded> {
        let (name, form) = lone_expansion(word)?;
        let values = self.values(name, snippet, at)?;
        let mut lists: Vec<Vec<String>> = Vec::new();
        for value in &values {
            let list = form.words(value);
            if !lists.contains(&list) {
                lists.push(list);
            }
        }
        Some(Expanded {
            name: name.to_string(),
            values: lists,
        })
    }
}

/// The elements of `NAME=(...)` when `word` is such an assignment's
/// `NAME=`, followed in `text` by `(`: `Some(None)` when an element is
/// only known at run time. The elements are the words of the commands
/// that follow it, up to the closing parenthesis.
fn array_elements(
    word: &Word,
    text: &str,
    after: &[(usize, Command)],
    snippet: usize,
) -> Option<Option<Value>> {
    if !word.text.ends_with('=') || word.range.len() != word.text.len() {
        return None;
    }
    let open = word.range.end as usize;
    if text.as_bytes().get(open) != Some(&b'(') {
        return None;
    }
    let close = open + text.get(open..)?.find(')')?;
    let mut elements = Vec::new();
    for (s, command) in after {
        if *s != snippet {
            break;
        }
        let range = command.range();
        if range.start as usize >= close {
            break;
        }
        for element in &command.words {
            if element.dynamic {
                return Some(None);
            }
            elements.push(element.text.clone());
        }
    }
    Some(Some(Value::Array(elements)))
}

fn assign_word(word: &Word, assign: &mut impl FnMut(&str, Option<Value>)) {
    if let Some(name) = appended_name(word) {
        assign(name, None);
    } else if let Some(name) = word.assigned_name() {
        let value = word.text[name.len() + 1..].to_string();
        assign(name, (!word.dynamic).then_some(Value::Scalar(value)));
    }
}

/// `NAME+=value`: the name, whose value gpulint then cannot tell.
fn appended_name(word: &Word) -> Option<&str> {
    let (name, _) = word.text.split_once("+=")?;
    is_name(name).then_some(name)
}

fn is_name(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// How a lone variable is written, which decides the words it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `$NAME`, `${NAME}` (an array's first element): split at blanks
    /// unless quoted.
    Plain { quoted: bool },
    /// `${NAME[@]}`: every element, each split at blanks unless quoted.
    Elements { quoted: bool },
    /// `${NAME[*]}`: every element; quoted, joined into one word.
    Joined { quoted: bool },
}

impl Form {
    /// The words `value` becomes where the variable is written this way.
    pub fn words(self, value: &Value) -> Vec<String> {
        let split = |text: &str| -> Vec<String> {
            text.split_ascii_whitespace().map(str::to_string).collect()
        };
        let elements: Vec<String> = match value {
            Value::Scalar(s) => vec![s.clone()],
            Value::Array(items) => items.clone(),
        };
        match self {
            Form::Plain { quoted } => {
                let first = elements.into_iter().next().unwrap_or_default();
                if quoted { vec![first] } else { split(&first) }
            }
            Form::Elements { quoted: true } => elements,
            Form::Elements { quoted: false } | Form::Joined { quoted: false } => {
                elements.iter().flat_map(|e| split(e)).collect()
            }
            Form::Joined { quoted: true } => vec![elements.join(" ")],
        }
    }
}

/// A word that is one variable's value and nothing else: `$FLAG`,
/// `${FLAG}`, `"$FLAG"`, `"${ARGS[@]}"`, with how it is written.
pub(crate) fn lone_expansion(word: &Word) -> Option<(&str, Form)> {
    if !word.dynamic {
        return None;
    }
    let inner = word.text.strip_prefix('$')?;
    // The shell removed quotes from the text, not from the range: a word
    // written `"$FLAG"` spans two bytes more than its text.
    let quoted = word.range.len() != word.text.len();
    let (name, form) = match inner.strip_prefix('{') {
        Some(braced) => {
            let braced = braced.strip_suffix('}')?;
            if let Some(name) = braced.strip_suffix("[@]") {
                (name, Form::Elements { quoted })
            } else if let Some(name) = braced.strip_suffix("[*]") {
                (name, Form::Joined { quoted })
            } else {
                (braced, Form::Plain { quoted })
            }
        }
        None => (inner, Form::Plain { quoted }),
    };
    is_name(name).then_some((name, form))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::shell::{Snippet, commands};

    fn variables(text: &str) -> (ScriptVariables, usize) {
        let all: Vec<(usize, Command)> = commands(&Snippet::verbatim(text, 0))
            .into_iter()
            .map(|c| (0, c))
            .collect();
        (ScriptVariables::read(&all, text), all.len())
    }

    fn scalars(values: &[&str]) -> Option<Vec<Value>> {
        Some(
            values
                .iter()
                .map(|v| Value::Scalar(v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn every_value_a_branch_assigns() {
        let (vars, end) = variables(
            "if [ -t 1 ]; then FLAG=\"-it\"\nelse\n  FLAG=\"\"\nfi\nexport OPTS='--rm -e A=1'\nX=1 cmd\n",
        );
        assert_eq!(vars.values("FLAG", 0, end), scalars(&["-it", ""]));
        assert_eq!(vars.values("OPTS", 0, end), scalars(&["--rm -e A=1"]));
        // A prefix assignment is that command's only; before its own
        // assignment a variable is the caller's.
        assert_eq!(vars.values("X", 0, end), None);
        assert_eq!(vars.values("FLAG", 0, 1), None);
    }

    #[test]
    fn what_the_script_cannot_tell() {
        let (vars, end) = variables(
            "A=\"$B -it\"\nC=-it\nC+=\" -d\"\nread D\nfor E in -it -d; do :; done\nprintf -v F %s x\nG=1\nG=$(date)\nunset H\n",
        );
        for name in ["A", "C", "D", "E", "F", "G", "Z"] {
            assert_eq!(vars.values(name, 0, end), None, "{name}");
        }
        assert_eq!(vars.values("H", 0, end), scalars(&[""]));
    }

    #[test]
    fn lone_expansions_and_their_words() {
        let words = |text: &str| commands(&Snippet::verbatim(text, 0)).remove(0).words;
        let w = words("run $FLAG ${FLAG} \"$FLAG\" $FLAG-x $1 '$FLAG' \"${A[@]}\" ${A[*]}");
        let found: Vec<_> = w.iter().map(lone_expansion).collect();
        assert_eq!(
            found,
            [
                None,
                Some(("FLAG", Form::Plain { quoted: false })),
                Some(("FLAG", Form::Plain { quoted: false })),
                Some(("FLAG", Form::Plain { quoted: true })),
                None,
                None,
                None,
                Some(("A", Form::Elements { quoted: true })),
                Some(("A", Form::Joined { quoted: false })),
            ]
        );
        let scalar = Value::Scalar(" -it  --rm ".into());
        assert_eq!(
            Form::Plain { quoted: false }.words(&scalar),
            ["-it", "--rm"]
        );
        assert_eq!(Form::Plain { quoted: true }.words(&scalar), [" -it  --rm "]);
        assert!(
            Form::Plain { quoted: false }
                .words(&Value::Scalar(String::new()))
                .is_empty()
        );
        let array = Value::Array(vec!["-v".into(), "/a b:/c".into()]);
        assert_eq!(
            Form::Elements { quoted: true }.words(&array),
            ["-v", "/a b:/c"]
        );
        assert_eq!(
            Form::Elements { quoted: false }.words(&array),
            ["-v", "/a", "b:/c"]
        );
        assert_eq!(Form::Joined { quoted: true }.words(&array), ["-v /a b:/c"]);
        assert_eq!(Form::Plain { quoted: false }.words(&array), ["-v"]);
    }

    /// NVIDIA-NeMo/RL `tests/run_functional_in_docker.sh`: an array that
    /// is empty, or holds the RDMA options when the host has them.
    #[test]
    fn arrays_on_every_branch() {
        let text = "RDMA_FLAGS=()\nif compgen -G x; then\n  RDMA_FLAGS=(--device=/dev/infiniband --cap-add=IPC_LOCK)\nfi\nARGS=(-v \"/a b:/c\")\nBAD=(\"$X\")\n";
        let (vars, end) = variables(text);
        assert_eq!(
            vars.values("RDMA_FLAGS", 0, end),
            Some(vec![
                Value::Array(Vec::new()),
                Value::Array(vec![
                    "--device=/dev/infiniband".into(),
                    "--cap-add=IPC_LOCK".into()
                ])
            ])
        );
        assert_eq!(
            vars.values("ARGS", 0, end),
            Some(vec![Value::Array(vec!["-v".into(), "/a b:/c".into()])])
        );
        assert_eq!(vars.values("BAD", 0, end), None);
    }
}

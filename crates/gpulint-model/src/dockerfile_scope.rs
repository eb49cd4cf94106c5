//! The build variables a Dockerfile instruction sees, as BuildKit scopes
//! them: a global `ARG` (before the first `FROM`) is visible in a stage only
//! once the stage declares it again (`ARG NAME`); a stage's `ARG` lasts to
//! the end of that stage; `ENV` lasts into the stages built on it and wins
//! over an `ARG` of the same name. Values are the defaults written in the
//! file (a `--build-arg` may replace them), expanded with `${VAR:-default}`
//! and friends.

use crate::dockerfile::{DockerfileModel, expand};
use foldhash::{HashMap, HashMapExt};

/// Where a variable's value comes from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// `None` when it has no value gpulint can know.
    pub value: Option<String>,
    /// `ARG` or `ENV`.
    pub keyword: &'static str,
    /// The instruction that set it.
    pub instruction: usize,
}

/// The variables in scope at one point of a stage.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    args: HashMap<String, Variable>,
    env: HashMap<String, Variable>,
}

impl Scope {
    /// `ENV` wins over `ARG`.
    pub fn get(&self, name: &str) -> Option<&Variable> {
        self.env.get(name).or_else(|| self.args.get(name))
    }

    pub fn value(&self, name: &str) -> Option<String> {
        self.get(name)?.value.clone()
    }

    /// `text` with the variables in scope expanded, and whether all were known.
    pub fn expand(&self, text: &str) -> (String, bool) {
        expand(text, &|name| self.get(name)?.value.as_deref())
    }

    fn apply(&mut self, model: &DockerfileModel, index: usize, globals: &HashMap<String, String>) {
        let instruction = model.instruction(index);
        let keyword = instruction.keyword.as_str();
        if keyword != "ARG" && keyword != "ENV" {
            return;
        }
        for pair in instruction.key_values() {
            let name = pair.key.text.clone();
            let value = match (&pair.value, keyword) {
                (Some(v), _) => {
                    let (text, complete) = self.expand(&v.text);
                    complete.then_some(text)
                }
                // `ARG NAME` in a stage brings in the global default.
                (None, "ARG") => globals.get(&name).cloned(),
                (None, _) => None,
            };
            let variable = Variable {
                value,
                keyword: if keyword == "ARG" { "ARG" } else { "ENV" },
                instruction: index,
            };
            if keyword == "ARG" {
                self.args.insert(name, variable);
            } else {
                self.env.insert(name, variable);
            }
        }
    }
}

/// Calls `visit` with each instruction of `stage`'s body (by index) and the
/// scope before it: the `ENV` of the stages it is built on, then its own
/// `ARG` and `ENV` in order. One scope is updated as it goes, so a long
/// Dockerfile stays linear.
pub fn walk_stage(model: &DockerfileModel, stage: usize, mut visit: impl FnMut(usize, &Scope)) {
    let globals: HashMap<String, String> = model
        .args_seen_by_from(&HashMap::new())
        .into_iter()
        .filter_map(|(name, value)| Some((name, value?)))
        .collect();
    let chain = model
        .base(stage, &HashMap::new())
        .map_or_else(|| vec![stage], |b| b.chain);
    let mut scope = Scope::default();
    // Outermost stage first; only ENV crosses into the next stage.
    for &ancestor in chain.iter().skip(1).rev() {
        for index in model.stages[ancestor].body.clone() {
            scope.apply(model, index, &globals);
        }
        scope.args.clear();
    }
    for index in model.stages[stage].body.clone() {
        visit(index, &scope);
        scope.apply(model, index, &globals);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope_at_last(text: &str) -> Scope {
        let model = DockerfileModel::parse(text);
        let last = model.stages.len() - 1;
        let mut at_last = Scope::default();
        walk_stage(&model, last, |_, scope| at_last = scope.clone());
        at_last
    }

    #[test]
    fn buildkit_scoping() {
        let scope = scope_at_last(
            "ARG TORCH=cpu\nARG UNUSED=1\nFROM base AS one\nENV INDEX=https://download.pytorch.org/whl/${TORCH:-cu121}\nARG LOCAL=x\nFROM one\nARG TORCH\nARG SPEC=\"torch --index-url ${INDEX}\"\nRUN pip install ${SPEC}\n",
        );
        // The global ARG is visible once redeclared.
        assert_eq!(scope.value("TORCH").as_deref(), Some("cpu"));
        // ENV of the parent stage, expanded there (TORCH was not declared
        // in stage one, so its default applied).
        assert_eq!(
            scope.value("INDEX").as_deref(),
            Some("https://download.pytorch.org/whl/cu121")
        );
        assert_eq!(
            scope.value("SPEC").as_deref(),
            Some("torch --index-url https://download.pytorch.org/whl/cu121")
        );
        // A stage's ARG and an undeclared global stay out.
        assert!(scope.get("LOCAL").is_none());
        assert!(scope.get("UNUSED").is_none());
    }
}

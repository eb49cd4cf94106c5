//! What a Dockerfile rule sees (the stages and their instructions) and how
//! it builds fixes: plain text edits whose intended changes are paths of
//! [`DockerfileModel::leaves`] (`stage.0.env.NCCL_P2P_DISABLE`).

use super::RuleSettings;
use crate::fix::{Applicability, Edit, Fix, ModelPath};
use crate::model::dockerfile::{DockerfileModel, EnvSetting};
use crate::text::TextRange;

pub struct DockerfileContext<'a> {
    pub model: &'a DockerfileModel,
    pub text: &'a str,
    pub settings: &'a RuleSettings,
}

impl<'a> DockerfileContext<'a> {
    pub fn source(&self, range: TextRange) -> &'a str {
        &self.text[range.as_range()]
    }

    /// The model path of an `ENV` variable in a stage.
    pub(crate) fn env_path(stage: usize, name: &str) -> ModelPath {
        ModelPath::new(["stage", &stage.to_string(), "env", name])
    }

    /// "stage `builder` of the image", "the image's final stage" or
    /// "stage 2 of the image", for messages.
    pub(crate) fn describe_stage(&self, stage: usize) -> String {
        match &self.model.stages[stage].name {
            Some(name) => format!("stage `{name}` of the image"),
            None if stage + 1 == self.model.stages.len() => "the image's final stage".to_string(),
            None => format!("stage {} of the image", stage + 1),
        }
    }

    /// A fix that removes one `ENV` setting: the pair, or the whole
    /// instruction (its lines and line break) when it sets nothing else.
    /// `None` when the instruction sets the same variable more than once
    /// (`ENV A=1 \ A=2`): removing one pair leaves the other in its place,
    /// so the fix would not remove what it says; that is left to the author.
    pub fn remove_env_fix(
        &self,
        setting: &EnvSetting,
        applicability: Applicability,
    ) -> Option<Fix> {
        let instruction = self.model.instruction(setting.instruction);
        let pairs = instruction.key_values();
        let same_key = pairs
            .iter()
            .filter(|p| p.key.text == setting.pair.key.text)
            .count();
        if same_key > 1 {
            return None;
        }
        let index = pairs
            .iter()
            .position(|p| std::ptr::eq(p, setting.pair))
            .expect("the setting is one of its instruction's pairs");
        let range = if pairs.len() == 1 {
            self.whole_lines(instruction.range)
        } else if index == 0 {
            // Up to the next pair, so the remaining pairs keep their layout.
            TextRange::new(
                setting.pair.range.start as usize,
                pairs[1].range.start as usize,
            )
        } else {
            // From the end of the previous pair: an escaped newline before
            // this pair goes with it, so the instruction still ends its line.
            TextRange::new(
                pairs[index - 1].range.end as usize,
                setting.pair.range.end as usize,
            )
        };
        Some(Fix::new(
            format!("Remove `ENV {}`", setting.pair.key.text),
            applicability,
            vec![Edit::delete(range)],
            vec![Self::env_path(setting.stage, &setting.pair.key.text)],
        ))
    }

    /// `range` widened to whole lines, with the line break after it.
    fn whole_lines(&self, range: TextRange) -> TextRange {
        let start = self.text[..range.start as usize]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let end = range.end as usize;
        let end = if self.text[end..].starts_with("\r\n") {
            end + 2
        } else if self.text[end..].starts_with('\n') {
            end + 1
        } else {
            end
        };
        TextRange::new(start, end)
    }
}

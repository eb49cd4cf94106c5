//! What an instruction's arguments say: its text and spans, its flags,
//! words and `KEY=value` pairs, and the shape BuildKit requires of them.

use super::*;

impl Instruction {
    /// The source text of the arguments, as one logical line.
    pub fn args_text(&self) -> &str {
        match &self.args {
            Args::Shell(w) => &w.text,
            Args::Exec(_) => "",
        }
    }

    /// The source range of `start..end` in [`Self::args_text`].
    pub fn args_range(&self, start: usize, end: usize) -> TextRange {
        self.logical
            .range(self.args_start + start, self.args_start + end)
    }

    /// The flag `--name`, if given.
    pub fn flag(&self, name: &str) -> Option<&Flag> {
        self.flags.iter().find(|f| f.name == name)
    }

    /// The whitespace-separated words of a shell-form argument string, each
    /// with its span (quotes kept in `text`).
    pub fn words(&self) -> Vec<Word> {
        let args = match &self.args {
            Args::Exec(words) => return words.clone(),
            Args::Shell(args) => args,
        };
        let text = &self.logical.text;
        let end = self.args_start + args.text.len();
        let mut words = Vec::new();
        let mut at = skip_space(text, self.args_start);
        while at < end {
            let e = word_end(text, at).min(end);
            words.push(self.logical.word(at, e));
            at = skip_space(text, e);
        }
        words
    }

    /// `ENV`, `ARG` and `LABEL` pairs. `ENV KEY value` (the legacy form)
    /// gives one pair whose value is the rest of the line.
    pub fn key_values(&self) -> &[KeyValue] {
        &self.pairs
    }

    pub(super) fn split_pairs(&self) -> Vec<KeyValue> {
        let words = self.words();
        let legacy = self.keyword != "ARG" && words.first().is_some_and(|w| !w.text.contains('='));
        if legacy {
            let Some(key) = words.first() else {
                return Vec::new();
            };
            let value = words.get(1).map(|first| {
                let last = words.last().expect("a first word");
                let range = first.range.cover(last.range);
                let rest = self.args_text()[key.text.len()..].trim();
                Word {
                    text: unquote(rest),
                    range,
                }
            });
            let range = match &value {
                Some(v) => key.range.cover(v.range),
                None => key.range,
            };
            return vec![KeyValue {
                key: key.clone(),
                value,
                range,
            }];
        }
        words
            .into_iter()
            .map(|w| match w.text.split_once('=') {
                Some((k, v)) => {
                    let key_end = w.range.start as usize + k.len();
                    KeyValue {
                        key: Word {
                            text: k.to_string(),
                            range: TextRange::new(w.range.start as usize, key_end),
                        },
                        value: Some(Word {
                            text: unquote(v),
                            range: TextRange::new(key_end + 1, w.range.end as usize),
                        }),
                        range: w.range,
                    }
                }
                None => KeyValue {
                    key: w.clone(),
                    value: None,
                    range: w.range,
                },
            })
            .collect()
    }

    /// Errors BuildKit reports for an instruction's shape.
    pub(super) fn shape_error(&self) -> Option<SyntaxError> {
        let error = |message: String| {
            Some(SyntaxError {
                message,
                range: self.keyword_range,
            })
        };
        match self.keyword.as_str() {
            "FROM" => {
                let words = self.words();
                let ok = words.len() == 1
                    || (words.len() == 3 && words[1].text.eq_ignore_ascii_case("as"));
                if !ok {
                    return error(
                        "`FROM` takes an image and optionally `AS name`: `FROM image[:tag] [AS name]`".into(),
                    );
                }
            }
            "ENV" | "LABEL" | "ARG" => {
                for word in self.words() {
                    if let Some(quote) = unclosed_quote(&word.text) {
                        let (name, kind) = if quote == '"' {
                            ("double", "double-quote")
                        } else {
                            ("single", "single-quote")
                        };
                        return Some(SyntaxError {
                            message: format!(
                                "`{}` has a {name} quote that is never closed (`failed to process \"…\": unexpected end of statement while looking for matching {kind}`)",
                                self.keyword
                            ),
                            range: word.range,
                        });
                    }
                }
                if self.keyword == "ARG" {
                    return None;
                }
                if let Some(pair) = self.key_values().iter().find(|p| p.value.is_none()) {
                    return Some(SyntaxError {
                        message: format!(
                            "`{}` needs a value for `{}`: write `{}=value`",
                            self.keyword, pair.key.text, pair.key.text
                        ),
                        range: pair.range,
                    });
                }
            }
            _ => {}
        }
        None
    }
}

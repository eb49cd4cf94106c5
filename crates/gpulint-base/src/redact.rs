//! What a message may quote. Findings are printed into terminals, CI logs,
//! pull-request annotations and SARIF uploads, which outlive the run and
//! are read by more people than the repository. A value that a setting
//! takes from elsewhere (the project's `.env`, which may be a symlink to
//! any file the checkout holds, `.git/config` with its auth header
//! included) is not the setting's own literal, and is never quoted; a
//! value that looks like a credential is never quoted, wherever it comes
//! from; and a long literal is cut short.
//!
//! This module is the one place that decides it: the engine passes every
//! finding through [`redact_diagnostic`] (and the values a compose file's
//! variables gave it through [`Hidden`]), so rules write their messages
//! with the values they read and need not decide each time.

use crate::diagnostic::Diagnostic;
use std::borrow::Cow;

/// What a credential is replaced with.
pub const REDACTED: &str = "<redacted>";

/// The longest quoted value a finding's message or label shows whole; a
/// longer one keeps its start. (Notes and help are the rule's own advice.)
pub const MAX_QUOTED: usize = 200;
/// How much of a longer quoted value is kept.
const KEPT_OF_LONG: usize = 40;

/// Values that came from outside the file (variables' values) and must not
/// be quoted, each with the name it is shown by instead.
#[derive(Debug, Default, Clone)]
pub struct Hidden {
    values: Vec<(String, String)>,
}

impl Hidden {
    /// The values of `variables` that do not appear in `text` (the file
    /// the findings are about: what it shows anyway is not hidden) and are
    /// more than a short plain word (see [`is_short_plain_word`]).
    pub fn values_not_in<'a>(
        variables: impl IntoIterator<Item = (&'a str, &'a str)>,
        text: &str,
    ) -> Hidden {
        let mut values: Vec<(String, String)> = variables
            .into_iter()
            .filter(|(_, value)| {
                !value.trim().is_empty()
                    && !is_short_plain_word(value)
                    && !is_placeholder(value)
                    && !text.contains(value)
            })
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        // The longest first: a value that holds another is replaced whole.
        values.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
        // A value that several variables hold cannot say which one a
        // setting took: it is shown as any of them (`${A}` or `${B}`),
        // never as the wrong one alone.
        let mut merged: Vec<(String, String)> = Vec::with_capacity(values.len());
        for (name, value) in values {
            match merged.iter_mut().find(|(_, v)| *v == value) {
                // A value with no name (a `.env` line without `=`) is shown
                // by the name another variable gives it, if any.
                Some(_) if name.is_empty() => {}
                Some((names, _)) if names.is_empty() => *names = name,
                Some((names, _)) => {
                    // In name order: the variables come from a map, and a
                    // report says the same thing on every run.
                    let mut all: Vec<&str> = names.split("} or ${").collect();
                    if !all.contains(&name.as_str()) {
                        all.push(&name);
                        all.sort_unstable();
                        *names = all.join("} or ${");
                    }
                }
                None => merged.push((name, value)),
            }
        }
        Hidden { values: merged }
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with each hidden value replaced by a placeholder that names
    /// its variable: inside a quoted (`` `…` ``) value wherever it stands,
    /// since a value interpolated into a longer setting (`${S}rest`) is
    /// quoted run into the text around it; elsewhere (the rule's own
    /// words: `64 mb` holds the value `64 m`) only as a whole word.
    fn apply<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for (name, value) in &self.values {
            if !out.contains(value.as_str()) {
                continue;
            }
            let quoted = quoted_ranges(&out);
            let mut replaced = String::with_capacity(out.len());
            let mut from = 0;
            for (at, _) in out.match_indices(value.as_str()) {
                if at < from {
                    continue;
                }
                let end = at + value.len();
                let in_quotes = quoted.iter().any(|q| q.start <= at && end <= q.end);
                let word_before = out[..at].chars().next_back().is_some_and(is_word_char);
                let word_after = out[end..].chars().next().is_some_and(is_word_char);
                if !in_quotes && (word_before || word_after) {
                    continue;
                }
                replaced.push_str(&out[from..at]);
                if name.is_empty() || replaced.ends_with(&format!("{name}=")) {
                    // No name to show it by (a `.env` line without `=`),
                    // or `NAME=value`: the name is already there.
                    replaced.push('…');
                } else {
                    // What the file itself says.
                    replaced.push_str(&format!("${{{name}}}"));
                }
                from = end;
            }
            if from == 0 {
                continue;
            }
            replaced.push_str(&out[from..]);
            out = Cow::Owned(replaced);
        }
        out
    }
}

/// The insides of the backtick-quoted spans of `text`.
fn quoted_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let ticks: Vec<usize> = text.match_indices('`').map(|(at, _)| at).collect();
    ticks
        .chunks_exact(2)
        .map(|pair| pair[0] + 1..pair[1])
        .collect()
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A value a setting commonly takes and a secret cannot hide in: under 12
/// characters of letters, digits and `._:/@+-` (`8gb`, `host`, `all`,
/// `0,1` is not one), and no credential. Hiding it would garble messages
/// (the word `host` is in the advice too) and protect nothing.
pub fn is_short_plain_word(value: &str) -> bool {
    value.len() < 12
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:/@+-".contains(c))
        && !looks_like_credential(value)
}

/// `<your_path>`, `<MODEL_DIR>`: a value shipped to be replaced, which
/// holds no secret (it is the same in every checkout) and is the finding's
/// point when it is quoted. Letters, digits and `._-/ ` between the
/// angle brackets.
pub fn is_placeholder(value: &str) -> bool {
    value.len() > 2
        && value.len() <= 64
        && value.starts_with('<')
        && value.ends_with('>')
        && value[1..value.len() - 1]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/ ".contains(c))
}

/// Redacts every text of a finding: message, label, note, help, related
/// spans' messages and the fix's title.
pub fn redact_diagnostic(d: &mut Diagnostic, hidden: &Hidden) {
    let apply = |text: &mut String, shorten: bool| {
        if let Cow::Owned(redacted) = redact_with(text, hidden, shorten) {
            *text = redacted;
        }
    };
    apply(&mut d.message, true);
    let apply_shared = |text: &mut std::sync::Arc<str>, shorten: bool| {
        if let Cow::Owned(redacted) = redact_with(text, hidden, shorten) {
            *text = redacted.into();
        }
    };
    if let Some(label) = &mut d.label {
        apply_shared(label, true);
    }
    if let Some(note) = &mut d.note {
        apply_shared(note, false);
    }
    if let Some(help) = &mut d.help {
        apply_shared(help, false);
    }
    for related in &mut d.related {
        apply(&mut related.message, true);
        // A span in another file (the `.env` line that decides a value) is
        // shown with its line: that file's hidden values and credentials
        // are masked, byte for byte, so its spans stay where they were.
        if let Some(file) = &related.file
            && let Cow::Owned(masked) = mask(&file.text, hidden)
        {
            related.file = Some(std::sync::Arc::new(crate::text::SourceFile::new(
                file.path.clone(),
                masked,
            )));
        }
    }
    if let Some(fix) = &mut d.fix {
        apply(&mut fix.title, false);
    }
}

/// `text` with each hidden value and each word that looks like a
/// credential overwritten with `*`, one per byte: the same length, so
/// offsets into it still hold (for the source lines of code frames).
pub fn mask<'t>(text: &'t str, hidden: &Hidden) -> Cow<'t, str> {
    let mut out = Cow::Borrowed(text);
    for (_, value) in &hidden.values {
        if out.contains(value.as_str()) {
            out = Cow::Owned(out.replace(value.as_str(), &"*".repeat(value.len())));
        }
    }
    if words(&out).any(|(_, word)| looks_like_credential(word)) {
        let mut masked = out.clone().into_owned();
        for (at, word) in words(&out) {
            if looks_like_credential(word) {
                // Words are ASCII: one `*` per byte is one per character.
                masked.replace_range(at..at + word.len(), &"*".repeat(word.len()));
            }
        }
        out = Cow::Owned(masked);
    }
    out
}

/// `text` as it may be shown: hidden values named instead, credentials
/// replaced by [`REDACTED`], and quoted (`` `...` ``) values longer than
/// [`MAX_QUOTED`] cut short.
pub fn redact<'t>(text: &'t str, hidden: &Hidden) -> Cow<'t, str> {
    redact_with(text, hidden, true)
}

/// [`redact`], shortening long quoted values only when `shorten`.
fn redact_with<'t>(text: &'t str, hidden: &Hidden, shorten: bool) -> Cow<'t, str> {
    let text = hidden.apply(text);
    let too_long =
        |quoted: &str| shorten && quoted.len() > MAX_QUOTED && quoted.chars().count() > MAX_QUOTED;
    // Every finding's texts pass here, and almost none holds a token: one
    // pass over the bytes rules the word checks out.
    let may_hold_token = has_token_run(&text, MIN_CREDENTIAL_LEN);
    let needs_work = text
        .split('`')
        .skip(1)
        .step_by(2)
        .any(|quoted| too_long(quoted) || quoted_credential(quoted, may_hold_token))
        || (may_hold_token && words(&text).any(|(_, word)| looks_like_credential(word)));
    if !needs_work {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    // Even pieces are outside backquotes, odd ones inside; an odd number of
    // backquotes leaves the last piece outside.
    let pieces: Vec<&str> = text.split('`').collect();
    let closed = pieces.len() % 2 == 1;
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            out.push('`');
        }
        let quoted = i % 2 == 1 && (closed || i + 1 < pieces.len());
        if quoted && quoted_credential(piece, may_hold_token) {
            out.push_str(REDACTED);
        } else if quoted && too_long(piece) {
            let kept: String = redact_words(piece).chars().take(KEPT_OF_LONG).collect();
            let total = piece.chars().count();
            out.push_str(&format!("{kept}… ({total} characters)"));
        } else {
            out.push_str(&redact_words(piece));
        }
    }
    Cow::Owned(out)
}

/// A quoted value that is, or holds, a credential: an authorization
/// header, a URL with a password, or a token (looked for only when
/// `may_hold_token`: the text it is part of has a long enough word).
fn quoted_credential(quoted: &str, may_hold_token: bool) -> bool {
    has_credential_word(quoted)
        || url_with_password(quoted)
        || (may_hold_token && words(quoted).any(|(_, word)| looks_like_credential(word)))
}

/// Whether `text` holds, in any case, a word that introduces a credential:
/// `authorization`, `bearer `, `basic ` or `private key-----`. Asked of
/// every backquoted piece of every finding's texts: one pass that looks
/// further only at an `a`, `b` or `p`, compared in place rather than
/// lower-cased into a new string.
fn has_credential_word(text: &str) -> bool {
    const WORDS: [&[u8]; 4] = [b"authorization", b"bearer ", b"basic ", b"private key-----"];
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(at, &b)| {
        matches!(b | 0x20, b'a' | b'b' | b'p')
            && WORDS.iter().any(|word| {
                bytes
                    .get(at..at + word.len())
                    .is_some_and(|w| w.eq_ignore_ascii_case(word))
            })
    })
}

/// The shortest word [`looks_like_credential`] accepts: a three-letter
/// prefix and 16 more.
const MIN_CREDENTIAL_LEN: usize = 19;

/// Whether `text` has a run of at least `len` bytes that [`words`] could
/// take as one word (token bytes and `=`): without one, no word of it is
/// long enough to be a credential.
fn has_token_run(text: &str, len: usize) -> bool {
    // A table lookup per byte: every finding's texts pass here.
    const TOKEN: [bool; 256] = {
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            table[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'_' | b'-' | b'=');
            b += 1;
        }
        table
    };
    let mut run = 0;
    for &b in text.as_bytes() {
        run = if TOKEN[b as usize] { run + 1 } else { 0 };
        if run >= len {
            return true;
        }
    }
    false
}

/// `scheme://user:password@host`.
fn url_with_password(text: &str) -> bool {
    // `://` needs a `:`: most quoted values have none, and setting up a
    // substring search costs more than looking.
    if memchr::memchr(b':', text.as_bytes()).is_none() {
        return false;
    }
    text.match_indices("://").any(|(at, _)| {
        let rest = &text[at + 3..];
        let authority = rest.split(['/', ' ', '`', '"', '\'']).next().unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// The words of `text` a token could be: runs of letters, digits and
/// `+/_-` (base64 and the token alphabets) with base64's `=` padding at
/// their end, and their offsets. `=` elsewhere separates (`TOKEN=value`).
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let is_token_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-');
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !is_token_byte(bytes[i]) {
            i += 1;
        }
        if i == bytes.len() {
            return None;
        }
        let start = i;
        while i < bytes.len() && is_token_byte(bytes[i]) {
            i += 1;
        }
        let mut end = i;
        while end < bytes.len() && bytes[end] == b'=' {
            end += 1;
        }
        // Padding ends a word; `=` followed by more of one is a separator.
        if end < bytes.len() && is_token_byte(bytes[end]) {
            end = i;
        }
        i = end.max(i);
        Some((start, &text[start..end]))
    })
}

/// `text` with each word that looks like a credential replaced.
fn redact_words(text: &str) -> Cow<'_, str> {
    if !words(text).any(|(_, word)| looks_like_credential(word)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, word) in words(text) {
        if looks_like_credential(word) {
            out.push_str(&text[last..at]);
            out.push_str(REDACTED);
            last = at + word.len();
        }
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// Whether one word is a credential: a token with a known issuer's prefix
/// (GitHub, GitLab, Slack, Hugging Face, OpenAI, Stripe, AWS, Google, npm,
/// PyPI), a JSON Web Token, or a long random-looking string (24 or more
/// characters of the token alphabet with upper and lower case letters and
/// digits, which names, paths, versions and hex digests are not).
pub fn looks_like_credential(word: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "xoxs-",
        "hf_",
        "sk-",
        "sk_live_",
        "rk_live_",
        "AKIA",
        "ASIA",
        "AIza",
        "npm_",
        "pypi-",
        "eyJ",
    ];
    if word.len() < MIN_CREDENTIAL_LEN {
        return false;
    }
    let body_len = |prefix: &str| word.len() - prefix.len();
    if PREFIXES
        .iter()
        .any(|p| word.starts_with(p) && body_len(p) >= 16)
    {
        return true;
    }
    word.len() >= 24
        && word.bytes().any(|b| b.is_ascii_uppercase())
        && word.bytes().any(|b| b.is_ascii_lowercase())
        && word.bytes().any(|b| b.is_ascii_digit())
        && looks_random(word)
}

/// Whether the letters and digits of `word` switch between upper case,
/// lower case and digits as often as random text does (about two times in
/// three), not as words do (`fixtures/DF004/app/Dockerfile`: a few times).
fn looks_random(word: &str) -> bool {
    let class = |b: u8| match b {
        b'A'..=b'Z' => 0,
        b'a'..=b'z' => 1,
        _ => 2,
    };
    let classes: Vec<u8> = word
        .bytes()
        .filter(u8::is_ascii_alphanumeric)
        .map(class)
        .collect();
    let switches = classes.windows(2).filter(|w| w[0] != w[1]).count();
    switches * 10 >= classes.len() * 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_words_are_found_in_any_case_and_only_whole() {
        for text in [
            "Authorization: token",
            "x-AUTHORIZATION",
            "Bearer abc",
            "curl -H 'bearer x'",
            "BASIC dXNlcg==",
            "-----BEGIN Private Key-----",
            "é bearer ",
        ] {
            assert!(has_credential_word(text), "{text}");
        }
        for text in [
            "",
            "authorizatio",
            "bearer",
            "basics",
            "private key----",
            "abp",
            "the base image",
            "ÀÁ bearér ",
        ] {
            assert!(!has_credential_word(text), "{text}");
        }
    }

    #[test]
    fn tokens_are_credentials_names_and_versions_are_not() {
        for token in [
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghij",
            "glpat-abcdefghij0123456789",
            "hf_abcdefghijklmnopqrstuvwxyzABCD",
            "AKIAIOSFODNN7EXAMPLE",
            "eyJhbGciOiJIUzI1NiJ9abcdef",
            "eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA==",
        ] {
            assert!(looks_like_credential(token), "{token}");
        }
        for word in [
            "nvcr",
            "pytorch",
            "24",
            "NCCL_SOCKET_IFNAME",
            "sha256",
            "3f5a9c0e7b1d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a",
            "TORCH_NCCL_ASYNC_ERROR_HANDLING",
            "fixtures/DF004/invalid_python_base/app/Dockerfile",
            "nvcr.io/nvidia/pytorch:24.01-py3",
            "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3",
            "default-shm-on-gpu-service",
            "sk-",
            "hf_hub",
        ] {
            assert!(!looks_like_credential(word), "{word}");
        }
    }

    #[test]
    fn a_quoted_authorization_header_is_redacted_whole() {
        let text = "not a valid size: `AUTHORIZATION: basic eC1hY2Nlc3M=` is not a size";
        assert_eq!(
            redact(text, &Hidden::default()),
            "not a valid size: `<redacted>` is not a size"
        );
        let url = "image `https://user:s3cret@registry.example/x` and `https://example.com/a@b`";
        assert_eq!(
            redact(url, &Hidden::default()),
            "image `<redacted>` and `https://example.com/a@b`"
        );
    }

    #[test]
    fn tokens_outside_quotes_are_redacted_too() {
        assert_eq!(
            redact(
                "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCD is set",
                &Hidden::default()
            ),
            "HF_TOKEN=<redacted> is set"
        );
    }

    #[test]
    fn long_quoted_values_are_cut_short() {
        let long = "x".repeat(201);
        let text = format!("value `{long}` here");
        let redacted = redact(&text, &Hidden::default());
        assert_eq!(
            redacted,
            format!("value `{}… (201 characters)` here", "x".repeat(40))
        );
        let text =
            "`NCCL WARN Error: failed to extend /dev/shm/nccl-...` (`unhandled system error`)";
        assert!(matches!(redact(text, &Hidden::default()), Cow::Borrowed(_)));
    }

    #[test]
    fn masking_keeps_every_offset() {
        let hidden = Hidden::values_not_in([("H", "AUTHORIZATION: basic x")], "");
        assert!(!hidden.is_empty());
        let text =
            "a\n\th = AUTHORIZATION: basic x\nt=ghp_abcdefghijklmnopqrstuvwxyz0123456789 é\n";
        let masked = mask(text, &hidden);
        assert_eq!(masked.len(), text.len());
        assert_eq!(
            masked,
            "a\n\th = **********************\nt=**************************************** é\n"
        );
    }

    /// After THUDM/ChatGLM3 openai_api_demo: two variables of a `.env` hold
    /// the same value, and the message must not name the other one alone.
    #[test]
    fn a_value_two_variables_hold_names_both() {
        let hidden = Hidden::values_not_in(
            [
                ("LOCAL_MODEL_PATH", "/srv/models/shared"),
                ("LOCAL_EMBEDDING_MODEL_PATH", "/srv/models/shared"),
            ],
            "volumes: [${LOCAL_MODEL_PATH}:/models]",
        );
        assert_eq!(
            hidden.apply("mounts `/srv/models/shared`"),
            "mounts `${LOCAL_EMBEDDING_MODEL_PATH} or ${LOCAL_MODEL_PATH}`"
        );
    }

    /// THUDM/ChatGLM3 ships `LOCAL_MODEL_PATH=<your_path>`: a placeholder
    /// is the same in every checkout, hides nothing, and is what the
    /// finding is about, so it is quoted; a path beside it is not.
    #[test]
    fn a_placeholder_is_quoted() {
        let hidden = Hidden::values_not_in(
            [("MODEL", "<your_path>"), ("DATA", "/srv/data/private")],
            "",
        );
        assert_eq!(
            hidden.apply("`<your_path>` and `/srv/data/private`"),
            "`<your_path>` and `${DATA}`"
        );
        assert!(is_placeholder("<MODEL_DIR>"));
        assert!(!is_placeholder("<a><b>"));
        assert!(!is_placeholder("<tok=secret>"));
    }

    /// A `.env` line without `=` has no variable to be shown by: it is
    /// `…`, never a placeholder named after itself; another variable that
    /// holds the same value names it.
    #[test]
    fn a_value_without_a_name_is_left_out() {
        let hidden = Hidden::values_not_in([("", "2<f"), ("", "tok<en x")], "");
        assert_eq!(
            hidden.apply("variable name \"2<f\" or `tok<en x`"),
            "variable name \"…\" or `…`"
        );
        let hidden = Hidden::values_not_in([("", "2<f"), ("B", "2<f")], "");
        assert_eq!(hidden.apply("`2<f`"), "`${B}`");
        let hidden = Hidden::values_not_in([("B", "2<f"), ("", "2<f")], "");
        assert_eq!(hidden.apply("`2<f`"), "`${B}`");
    }

    #[test]
    fn hidden_values_are_named_not_quoted() {
        let hidden = Hidden::values_not_in(
            [
                ("SHM", "64 m"),
                ("NAME", "trainer-with-a-long-name"),
                ("IPC", "host"),
                ("EMPTY", ""),
            ],
            "services:\n  trainer-with-a-long-name:\n    shm_size: ${SHM}\n    ipc: ${IPC}\n",
        );
        assert_eq!(
            redact(
                "`64 m` is too small for `trainer-with-a-long-name`; 64 mb; ipc: host",
                &hidden
            ),
            "`${SHM}` is too small for `trainer-with-a-long-name`; 64 mb; ipc: host"
        );
        // Run into other text inside a quoted value, it is still hidden.
        assert_eq!(
            redact("`64 mrest` is not a size; `x64 m` either", &hidden),
            "`${SHM}rest` is not a size; `x${SHM}` either"
        );
        assert_eq!(
            redact("`SHM=64 m` in the project's .env", &hidden),
            "`SHM=…` in the project's .env"
        );
    }
}

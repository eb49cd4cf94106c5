//! Variable expansion in bounded time and space: `$NAME`, `${NAME}` and
//! `${NAME<op>word}` with words that nest (`${A:-${B:-x}}`), expanded by
//! one left-to-right pass with an explicit stack (no recursion: a default
//! nested 100 000 deep is a deep stack of small frames on the heap, not a
//! stack overflow) and a size budget (an `ARG` doubling its value line by
//! line would reach 2^n bytes).
//!
//! The text's braces are matched once up front, so finding where a `${`
//! ends is a table lookup, not a scan (a scan per level made nested
//! defaults quadratic). Each byte of the text is read at most once, and
//! the output never exceeds [`crate::tree::Budget`]: the whole
//! expansion is linear in the text and the budget.
//!
//! The operators and escapes are a [`Dialect`]'s: BuildKit's Dockerfile
//! lexer today. Compose's (`$$`, `${NAME:?error}`) can be added as another
//! dialect without touching the walk.

/// How variables are written in one language.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// `\$` is a literal `$` (BuildKit); otherwise a backslash is text.
    pub backslash_escapes_dollar: bool,
}

impl Dialect {
    /// BuildKit's Dockerfile words: `\$` escapes, and `${NAME:-word}`,
    /// `${NAME-word}`, `${NAME:+word}`, `${NAME+word}` (any other text after
    /// the name, such as `${NAME:?x}`, is ignored: the variable's value).
    pub const BUILDKIT: Dialect = Dialect {
        backslash_escapes_dollar: true,
    };
}

/// The most output one expansion may produce: twice its text and 4 KiB
/// more. Long text expands in full (a `RUN` of 50 packages); a short text
/// that would grow past that (a doubling chain, a value repeated by
/// reference) is not expanded.
pub fn budget_for(text: &str) -> usize {
    2 * text.len() + 4096
}

/// An expansion: the text, and whether every variable in it was known.
/// Over budget, the text is the original, unexpanded, and not complete:
/// like a variable with no known value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    pub text: String,
    pub complete: bool,
    pub over_budget: bool,
}

/// `text` with its variables expanded through `lookup` (`None`: unknown,
/// kept as written and the result not complete), producing at most
/// `budget` bytes.
pub fn expand<'v>(
    text: &str,
    dialect: Dialect,
    lookup: &dyn Fn(&str) -> Option<&'v str>,
    budget: usize,
) -> Expanded {
    let over = || over_budget(text);
    if !text.contains('$') {
        return without_variables(text, budget);
    }
    let closing = matching_braces(text);
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut complete = true;
    // Segments of `text` still to expand, innermost last: (from, to).
    let mut segments: Vec<(usize, usize)> = vec![(0, text.len())];
    while let Some(&(i, end)) = segments.last() {
        if i >= end {
            segments.pop();
            continue;
        }
        let next;
        let c = bytes[i];
        if c == b'\\' && dialect.backslash_escapes_dollar && bytes.get(i + 1) == Some(&b'$') {
            out.push('$');
            next = i + 2;
        } else if c != b'$' {
            // Copy up to the next `$` or `\` of this segment at once.
            // (`$` and `\` are ASCII: the run ends on a char boundary.)
            let run = text[i..end]
                .find(['$', '\\'])
                .map_or(end, |at| if at == 0 { i + 1 } else { i + at });
            out.push_str(&text[i..run]);
            next = run;
        } else if bytes.get(i + 1) == Some(&b'{') {
            let Some(close) = closing[i + 1].filter(|&close| close < end) else {
                // Never closed: the rest is text, and not complete.
                out.push_str(&text[i..end]);
                complete = false;
                segments.pop();
                if out.len() > budget {
                    return over();
                }
                continue;
            };
            let inner = &text[i + 2..close];
            let name_len = name_len(inner);
            let (name, op) = inner.split_at(name_len);
            let value = lookup(name);
            let word_start = i + 2 + name_len;
            let (word, colon) = operator(op, word_start);
            let set = value.is_some_and(|v| !colon || !v.is_empty());
            next = close + 1;
            // The rest of this segment comes after what the word expands to.
            segments.last_mut().expect("a segment is open").0 = next;
            match word {
                Some(('-', from)) if !set => {
                    segments.push((from, close));
                    continue;
                }
                Some(('+', from)) => {
                    if set {
                        segments.push((from, close));
                        continue;
                    } else if value.is_none() && !colon {
                        // `${X+alt}` with X unknown: cannot tell.
                        complete = false;
                    }
                }
                _ => {
                    // Unknown, it stays as written.
                    complete &= value.is_some();
                    if !push_within(&mut out, value.unwrap_or(&text[i..=close]), budget) {
                        return over();
                    }
                }
            }
        } else {
            match plain_variable(text, i, end, lookup, &mut out, budget) {
                Some((after, known)) => {
                    next = after;
                    complete &= known;
                }
                None => return over(),
            }
        }
        if out.len() > budget {
            return over();
        }
        if let Some(top) = segments.last_mut() {
            top.0 = next;
        }
    }
    Expanded {
        text: out,
        complete,
        over_budget: false,
    }
}

/// `text` kept as written: what an expansion past its budget gives.
fn over_budget(text: &str) -> Expanded {
    Expanded {
        text: text.to_string(),
        complete: false,
        over_budget: true,
    }
}

/// The expansion of a text without a `$`: only its `\$` escapes change.
fn without_variables(text: &str, budget: usize) -> Expanded {
    if text.len() > budget {
        return over_budget(text);
    }
    Expanded {
        text: text.replace("\\$", "$"),
        complete: true,
        over_budget: false,
    }
}

/// The operator after a `${NAME` and where its word starts: `-` (a
/// default) or `+` (an alternative), and whether a colon makes an empty
/// value count as unset.
fn operator(op: &str, word_start: usize) -> (Option<(char, usize)>, bool) {
    if op.starts_with(":-") {
        (Some(('-', word_start + 2)), true)
    } else if op.starts_with(":+") {
        (Some(('+', word_start + 2)), true)
    } else if op.starts_with('-') {
        (Some(('-', word_start + 1)), false)
    } else if op.starts_with('+') {
        (Some(('+', word_start + 1)), false)
    } else {
        (None, false)
    }
}

/// The length of the variable name `text` starts with.
fn name_len(text: &str) -> usize {
    text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len())
}

/// Appends `value` unless that takes `out` past `budget` (false then).
fn push_within(out: &mut String, value: &str, budget: usize) -> bool {
    if out.len() + value.len() > budget {
        return false;
    }
    out.push_str(value);
    true
}

/// Expands the `$NAME` (or lone `$`) at `i` into `out`: where the text
/// goes on and whether the value was known; `None` past `budget`.
fn plain_variable<'v>(
    text: &str,
    i: usize,
    end: usize,
    lookup: &dyn Fn(&str) -> Option<&'v str>,
    out: &mut String,
    budget: usize,
) -> Option<(usize, bool)> {
    let name_len = name_len(&text[i + 1..end]);
    if name_len == 0 {
        out.push('$');
        return Some((i + 1, true));
    }
    let name = &text[i + 1..i + 1 + name_len];
    let known = match lookup(name) {
        Some(v) => {
            if !push_within(out, v, budget) {
                return None;
            }
            true
        }
        None => {
            out.push_str(&text[i..i + 1 + name_len]);
            false
        }
    };
    Some((i + 1 + name_len, known))
}

/// For each `{` of `text`, the index of the `}` that closes it, counting
/// every brace after it (a default may hold `{`, `}` and `${...}`); `None`
/// for a brace never closed and for other bytes.
fn matching_braces(text: &str) -> Vec<Option<usize>> {
    let mut closing = vec![None; text.len()];
    let mut open = Vec::new();
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'{' => open.push(i),
            b'}' => {
                if let Some(at) = open.pop() {
                    closing[at] = Some(i);
                }
            }
            _ => {}
        }
    }
    closing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buildkit<'v>(text: &str, vars: &'v [(&'v str, &'v str)]) -> (String, bool) {
        let lookup = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        let e = expand(text, Dialect::BUILDKIT, &lookup, budget_for(text));
        (e.text, e.complete)
    }

    #[test]
    fn operators_and_escapes_as_buildkit_reads_them() {
        let vars = [("A", "x"), ("E", "")];
        assert_eq!(buildkit("$A-${A:+y}${B:-${A}}", &vars).0, "x-yx");
        assert_eq!(buildkit("\\$A ${A", &vars), ("$A ${A".to_string(), false));
        assert_eq!(buildkit("${E:-d}|${E-d}|${E:+p}|${E+p}", &vars).0, "d|||p");
        assert_eq!(
            buildkit("${U+p}", &vars),
            (String::new(), false),
            "unknown: cannot tell"
        );
        assert_eq!(buildkit("${U:+p}", &vars), (String::new(), true));
        assert_eq!(
            buildkit("a/${U}/$U/$/é${A}", &vars),
            ("a/${U}/$U/$/éx".to_string(), false)
        );
        assert_eq!(buildkit("${A:-{x}}", &vars).0, "x");
        assert_eq!(buildkit("${B:-{x}}!", &vars).0, "{x}!");
        assert_eq!(buildkit("${A:?err}", &vars).0, "x");
        assert_eq!(buildkit("no variables \\$", &vars).0, "no variables $");
    }

    #[test]
    fn deep_nesting_is_iterative() {
        let depth = 200_000;
        let text = format!("{}img{}", "${a:-".repeat(depth), "}".repeat(depth));
        assert_eq!(buildkit(&text, &[]), ("img".to_string(), true));
        // Unclosed at every level: kept as text.
        let open = "${a:-".repeat(depth);
        assert_eq!(buildkit(&open, &[]), (open.clone(), false));
    }

    #[test]
    fn output_past_the_budget_is_not_expanded() {
        let big = "x".repeat(10_000);
        let vars = [("A", big.as_str())];
        let e = expand(
            "${A}${A}",
            Dialect::BUILDKIT,
            &|n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| *v),
            15_000,
        );
        assert_eq!(
            e,
            Expanded {
                text: "${A}${A}".to_string(),
                complete: false,
                over_budget: true
            }
        );
        assert_eq!(budget_for("${A}"), 4104);
    }

    /// The recursive expander this one replaced (gpulint before issue 29),
    /// as the reference: the same results on every small text.
    fn recursive(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> (String, bool) {
        let mut out = String::new();
        let mut complete = true;
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            let c = bytes[i];
            if c == b'\\' && i + 1 < text.len() && bytes[i + 1] == b'$' {
                out.push('$');
                i += 2;
                continue;
            }
            if c != b'$' {
                let ch = text[i..].chars().next().unwrap();
                out.push(ch);
                i += ch.len_utf8();
                continue;
            }
            if bytes.get(i + 1) == Some(&b'{') {
                let mut depth = 0;
                let mut end = None;
                for (j, &b) in bytes.iter().enumerate().skip(i + 1) {
                    match b {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(j);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let Some(end) = end else {
                    out.push_str(&text[i..]);
                    return (out, false);
                };
                let inner = &text[i + 2..end];
                let name_len = inner
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(inner.len());
                let (name, op) = inner.split_at(name_len);
                let value = lookup(name);
                let (word, colon) = if let Some(w) = op.strip_prefix(":-") {
                    (Some(('-', w)), true)
                } else if let Some(w) = op.strip_prefix(":+") {
                    (Some(('+', w)), true)
                } else if let Some(w) = op.strip_prefix('-') {
                    (Some(('-', w)), false)
                } else if let Some(w) = op.strip_prefix('+') {
                    (Some(('+', w)), false)
                } else {
                    (None, false)
                };
                let set = value.as_ref().is_some_and(|v| !colon || !v.is_empty());
                match word {
                    Some(('-', w)) if !set => {
                        let (e, c) = recursive(w, lookup);
                        out.push_str(&e);
                        complete &= c;
                    }
                    Some(('+', w)) => {
                        if set {
                            let (e, c) = recursive(w, lookup);
                            out.push_str(&e);
                            complete &= c;
                        } else if value.is_none() && !colon {
                            complete = false;
                        }
                    }
                    _ => match value {
                        Some(v) => out.push_str(&v),
                        None => {
                            out.push_str(&text[i..=end]);
                            complete = false;
                        }
                    },
                }
                i = end + 1;
                continue;
            }
            let name_len = text[i + 1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(text.len() - i - 1);
            if name_len == 0 {
                out.push('$');
                i += 1;
                continue;
            }
            let name = &text[i + 1..i + 1 + name_len];
            match lookup(name) {
                Some(v) => out.push_str(&v),
                None => {
                    out.push_str(&text[i..i + 1 + name_len]);
                    complete = false;
                }
            }
            i += 1 + name_len;
        }
        (out, complete)
    }

    #[test]
    fn the_same_results_as_the_recursive_expander() {
        const PIECES: &[&str] = &[
            "$", "{", "}", ":", "-", "+", "\\", "A", "E", "U", "x", "é", "${", "${A", "${U:-",
            ":-", ":+", "$A", "\\$",
        ];
        let vars = [("A", "va"), ("E", "")];
        let lookup = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        let owned = |name: &str| lookup(name).map(str::to_string);
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..50_000 {
            let mut text = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 12) as usize;
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(PIECES[(state % PIECES.len() as u64) as usize]);
            }
            let new = expand(&text, Dialect::BUILDKIT, &lookup, usize::MAX);
            assert_eq!(
                (new.text, new.complete),
                recursive(&text, &owned),
                "{text:?}"
            );
        }
    }
}

//! Argument strings split as the program that runs them splits them, not
//! as a shell would: the GitHub Actions runner joins a job container's
//! `options:` into the one argument string it gives `docker create`, and
//! .NET's `Process` splits that string (dotnet/runtime
//! `Process.Unix.cs` `ParseArgumentsIntoList`).

use crate::shell::{Snippet, Word};

/// The words .NET's `Process` makes of `snippet`'s text: only spaces and
/// tabs separate them (a newline is part of a word); `"` groups and is
/// removed, `""` inside a group is one `"`; backslashes are literal except
/// before a `"`, where each pair is one backslash and an odd one makes the
/// quote literal; `'` is an ordinary character. A GitHub expression
/// (`${{ matrix.opts }}`) is substituted before the split, so its text is
/// one unknown part of its word whatever it holds: the word is dynamic.
pub fn dotnet_words(snippet: &Snippet) -> Vec<Word> {
    let text = snippet.text.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < text.len() {
        while i < text.len() && matches!(text[i], b' ' | b'\t') {
            i += 1;
        }
        if i == text.len() {
            break;
        }
        let start = i;
        let mut word: Vec<u8> = Vec::new();
        let mut dynamic = false;
        let mut in_quotes = false;
        while i < text.len() {
            if text[i..].starts_with(b"${{") {
                let end = find(&text[i..], b"}}").map_or(text.len(), |at| i + at + 2);
                word.extend_from_slice(&text[i..end]);
                dynamic = true;
                i = end;
                continue;
            }
            let backslashes = text[i..].iter().take_while(|&&b| b == b'\\').count();
            if backslashes > 0 {
                i += backslashes;
                if text.get(i) == Some(&b'"') {
                    word.extend(std::iter::repeat_n(b'\\', backslashes / 2));
                    if backslashes % 2 == 1 {
                        word.push(b'"');
                        i += 1;
                    }
                } else {
                    word.extend(std::iter::repeat_n(b'\\', backslashes));
                }
                continue;
            }
            match text[i] {
                b'"' if in_quotes && text.get(i + 1) == Some(&b'"') => {
                    word.push(b'"');
                    i += 2;
                }
                b'"' => {
                    in_quotes = !in_quotes;
                    i += 1;
                }
                b' ' | b'\t' if !in_quotes => break,
                byte => {
                    word.push(byte);
                    i += 1;
                }
            }
        }
        words.push(Word {
            // Only ASCII bytes are removed or added, so the bytes kept
            // are whole UTF-8 sequences.
            text: String::from_utf8_lossy(&word).into_owned(),
            range: snippet.host_range(start, i),
            dynamic,
        });
    }
    words
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        dotnet_words(&Snippet::verbatim(text, 0))
            .into_iter()
            .map(|w| w.text)
            .collect()
    }

    /// Each rule of dotnet/runtime's `ParseArgumentsIntoList` (the
    /// `CommandLineToArgvW` rules it follows), and the shapes workflow
    /// `options:` take (tests/it/workflow_containers.rs gives the words to
    /// the real `docker create`).
    #[test]
    fn splits_as_dotnet_process_does() {
        let cases: &[(&str, &[&str])] = &[
            ("a b c", &["a", "b", "c"]),
            ("  a\t\tb  ", &["a", "b"]),
            ("\"a b\" c", &["a b", "c"]),
            ("a\"b c\"d", &["ab cd"]),
            ("\"a\"\"b\"", &["a\"b"]),
            ("a\\\\b", &["a\\\\b"]),
            ("a\\\"b", &["a\"b"]),
            ("a\\\\\"b c\"", &["a\\b c"]),
            ("a\\\\\\\"b", &["a\\\"b"]),
            ("\"\"", &[""]),
            ("'a b'", &["'a", "b'"]),
            ("--gpus '\"device=0,1\"'", &["--gpus", "'device=0,1'"]),
            (
                "--gpus \"\\\"device=0,1\\\"\"",
                &["--gpus", "\"device=0,1\""],
            ),
            (
                "--gpus all\n--shm-size 8g\n",
                &["--gpus", "all\n--shm-size", "8g\n"],
            ),
            (
                "--shm-size ${{ matrix.shm }} --ipc host",
                &["--shm-size", "${{ matrix.shm }}", "--ipc", "host"],
            ),
            ("${{ matrix.opts }}", &["${{ matrix.opts }}"]),
            ("\"open", &["open"]),
        ];
        for (text, expected) in cases {
            assert_eq!(words(text), *expected, "{text:?}");
        }
    }

    /// dotnet/runtime's own vectors for this split (`ProcessTests.cs`,
    /// `TestArgumentParsing`: a child process prints its three arguments
    /// joined by commas), written here as the strings they are.
    #[test]
    fn agrees_with_dotnet_runtimes_own_test_vectors() {
        let cases: &[(&str, &str)] = &[
            (r#""abc" d e"#, "abc,d,e"),
            (r#""abc"      d e"#, "abc,d,e"),
            ("\"abc\"\t\td\te", "abc,d,e"),
            (r#"a\\b d"e f"g h"#, r#"a\\b,de fg,h"#),
            (r#"\ \\ \\\"#, r#"\,\\,\\\"#),
            (r#"a\\\"b c d"#, r#"a\"b,c,d"#),
            (r#"a\\\\"b c" d e"#, r#"a\\b c,d,e"#),
            (r#"a"b c"d e"f g"h i"j k"l"#, "ab cd,ef gh,ij kl"),
            (r#"a b c"def"#, "a,b,cdef"),
            (r#""\a\" \\"\\\ b c"#, r#"\a" \\\\,b,c"#),
            (r#""" b """#, ",b,"),
            (r#""""" b c"#, r#"",b,c"#),
            (r#"c"""" b ""\"#, r#"c",b,\"#),
            (r#"""c ""b"" d"\"#, r#"c,b,d\"#),
            (r#"""a"" b d"#, "a,b,d"),
            (r#"b d ""a"" "#, "b,d,a"),
            (r#"\"\"a\"\" b d"#, r#"""a"",b,d"#),
            (r#"b d \"\"a\"\""#, r#"b,d,""a"""#),
        ];
        for (text, expected) in cases {
            assert_eq!(words(text).join(","), *expected, "{text:?}");
        }
    }

    #[test]
    fn words_map_back_to_where_they_are_written() {
        let snippet = Snippet::verbatim("--gpus \"all\" --ipc=${{ x }}", 10);
        let words = dotnet_words(&snippet);
        let ranges: Vec<_> = words.iter().map(|w| (w.range.start, w.range.end)).collect();
        assert_eq!(ranges, [(10, 16), (17, 22), (23, 37)]);
        assert_eq!(
            words.iter().map(|w| w.dynamic).collect::<Vec<_>>(),
            [false, false, true]
        );
    }
}

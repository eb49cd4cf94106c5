//! A shell script read the way the shell runs it, as far as linting needs:
//! its simple commands (`shell::lex`), its here-documents (the delimiter,
//! whether it is quoted, the body's byte range and the command that
//! receives it, and whether that body is itself a script: fed to `sbatch`,
//! to a shell, or written out as a batch script) and the control flow each
//! command sits in (`if`/`elif`/`else` branches with their conditions,
//! `case` arms with their patterns, loops, functions, groups).
//!
//! Bodies that are scripts are read the same way, nested, each with its
//! own commands and control flow; ranges stay in the host file. Everything
//! is one pass over the text per nesting level (bounded by
//! [`MAX_NESTED_SCRIPTS`]), and no construct is followed by recursion, so
//! hostile input (unterminated here-documents and blocks, deep nesting,
//! stray `fi`s) reads in linear time: unclosed blocks end with the text,
//! a closing keyword with nothing to close is an ordinary word.

use crate::shell::{Command, HereDoc, Lexed, Op, Snippet, Token, Word, lex};

use crate::text::TextRange;

/// Here-document bodies read as scripts nest at most this deep.
pub const MAX_NESTED_SCRIPTS: usize = 4;

/// Shells whose standard input, a here-document, is a script they run.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh"];

#[derive(Debug, Clone, Default)]
pub struct ShellScript {
    /// What the lexer read: commands, here-documents, operators.
    pub lexed: Lexed,
    /// The branches and bodies of compound commands, outermost first
    /// (a block's parent comes before it).
    pub blocks: Vec<Block>,
    /// For each command of `lexed.commands`, the innermost block it is in.
    pub command_block: Vec<Option<usize>>,
    /// The here-document bodies that are scripts, read as scripts.
    pub nested: Vec<NestedScript>,
}

/// A here-document body that is a script of its own.
#[derive(Debug, Clone)]
pub struct NestedScript {
    /// Its index in the outer script's `lexed.heredocs`.
    pub heredoc: usize,
    pub feeds: Feeds,
    pub script: ShellScript,
}

/// What a here-document's body becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feeds {
    /// sbatch's standard input (`sbatch <<EOF`, `cat <<EOF | sbatch`): a
    /// batch script submitted as a job of its own.
    Sbatch,
    /// A shell's standard input (`bash <<EOF`, `srun bash <<EOF`, `cat
    /// <<EOF | bash`): commands run here.
    Shell,
    /// Any other command's (`cat <<EOF > job.sbatch`, `python - <<EOF`):
    /// data, which may be a script written to a file.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// `then`: the body of an `if` or `elif` whose condition holds.
    Then,
    /// `else`: no earlier condition of the statement holds.
    Else,
    /// A `case` arm: the subject matches one of its patterns.
    CaseArm,
    /// The body of `while`, `until` or `for`.
    Loop,
    /// A function's body.
    Function,
    /// `{ … }` or `( … )`.
    Group,
}

/// A branch or body of a compound command.
#[derive(Debug, Clone)]
pub struct Block {
    pub kind: BlockKind,
    /// The `if` or `case` statement the block belongs to: blocks with the
    /// same statement are its sibling branches, in order.
    pub statement: usize,
    /// The condition of a `Then` block: the commands between `if`/`elif`
    /// and `then`, each as its index in `lexed.commands` and the index of
    /// its first word after the keyword (`!` kept); for a `case` arm, the
    /// `case` command and the subject's index (1).
    pub condition: Vec<(usize, usize)>,
    /// A case arm's patterns, as written (quotes removed).
    pub patterns: Vec<String>,
    pub parent: Option<usize>,
    /// From the end of the keyword that opens it to the start of the one
    /// that closes it (or the end of the text).
    pub range: TextRange,
}

impl ShellScript {
    /// A whole file, or a part of one starting at `offset`.
    pub fn read(text: &str, offset: usize) -> ShellScript {
        Self::read_nested(text, offset, 0)
    }

    fn read_nested(text: &str, offset: usize, depth: usize) -> ShellScript {
        let lexed = lex(&Snippet::verbatim(text, offset));
        let end = offset + text.len();
        let (blocks, command_block) = Flow::read(&lexed, end);
        let mut script = ShellScript {
            lexed,
            blocks,
            command_block,
            nested: Vec::new(),
        };
        if depth + 1 >= MAX_NESTED_SCRIPTS {
            return script;
        }
        for (n, heredoc) in script.lexed.heredocs.iter().enumerate() {
            let feeds = script.feeds(heredoc);
            let body = heredoc.body.as_range();
            let inside = body
                .start
                .checked_sub(offset)
                .zip(body.end.checked_sub(offset));
            let Some(body_text) = inside.and_then(|(start, end)| text.get(start..end)) else {
                continue;
            };
            // Data is read as a script only when it is a batch script.
            let batch = body_text.lines().any(|l| {
                let l = if heredoc.strip_tabs {
                    l.trim_start_matches('\t')
                } else {
                    l
                };
                l.starts_with("#SBATCH")
            });
            if feeds == Feeds::Other && !batch {
                continue;
            }
            script.nested.push(NestedScript {
                heredoc: n,
                feeds,
                script: Self::read_nested(body_text, body.start, depth + 1),
            });
        }
        script
    }

    /// What the body of `heredoc` (one of this script's) is given to: its
    /// command, or, for a `cat` without files, the command `cat` pipes to.
    pub fn feeds(&self, heredoc: &HereDoc) -> Feeds {
        let commands = &self.lexed.commands;
        let Some(command) = commands.get(heredoc.command) else {
            return Feeds::Other;
        };
        let mut receiver = command;
        if program_of(command).as_deref() == Some("cat")
            && !cat_reads_files(command)
            && let Some(at) = self
                .lexed
                .tokens
                .iter()
                .position(|t| *t == Token::Command(heredoc.command))
            && let Some(Token::Op(Op::Pipe, _)) = self.lexed.tokens.get(at + 1)
            && let Some(Token::Command(next)) = self.lexed.tokens.get(at + 2)
        {
            receiver = &commands[*next];
        }
        match program_of(receiver).as_deref() {
            Some("sbatch") => Feeds::Sbatch,
            // `srun … bash <<EOF`, `ssh host bash -s <<EOF`: a shell among
            // the words runs it.
            Some(_) => match receiver
                .words
                .iter()
                .position(|w| SHELLS.contains(&basename(&w.text)))
            {
                Some(at) => shell_reads_stdin(&receiver.words[at..]),
                None => Feeds::Other,
            },
            None => Feeds::Other,
        }
    }

    /// The blocks command `n` is in, innermost first.
    pub fn blocks_of(&self, n: usize) -> impl Iterator<Item = (usize, &Block)> {
        let mut at = self.command_block.get(n).copied().flatten();
        std::iter::from_fn(move || {
            let i = at?;
            at = self.blocks[i].parent;
            Some((i, &self.blocks[i]))
        })
    }

    /// The innermost block holding `offset` (a comment line, a here-document
    /// body), if any.
    pub fn block_at(&self, offset: usize) -> Option<usize> {
        // Blocks are listed parent first and nest, so the last that holds
        // the offset is the innermost.
        self.blocks.iter().rposition(|b| b.range.contains(offset))
    }

    /// The words of a block's condition, command by command.
    pub fn condition<'s>(&'s self, block: &'s Block) -> impl Iterator<Item = &'s [Word]> {
        block
            .condition
            .iter()
            .filter_map(|&(n, k)| self.lexed.commands.get(n)?.words.get(k..))
    }

    /// The blocks of the statement `statement`, in order.
    pub fn branches(&self, statement: usize) -> impl Iterator<Item = (usize, &Block)> {
        self.blocks
            .iter()
            .enumerate()
            .filter(move |(_, b)| b.statement == statement)
    }
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The program a command runs: its first word after assignments and `env`,
/// `exec`, `command`, `time` and `nohup`.
fn program_of(command: &Command) -> Option<String> {
    command
        .words
        .iter()
        .filter(|w| w.assigned_name().is_none())
        .map(|w| basename(&w.text))
        .find(|w| !matches!(*w, "env" | "exec" | "command" | "time" | "nohup"))
        .map(str::to_string)
}

/// A shell given a here-document runs it unless it is given a script
/// file or `-c` (then the body is that program's input).
fn shell_reads_stdin(shell: &[Word]) -> Feeds {
    let mut words = shell.iter().skip(1);
    while let Some(word) = words.next() {
        let text = word.text.as_str();
        if text == "-c" {
            return Feeds::Other;
        }
        if text == "-o" || text == "+o" {
            words.next();
        } else if is_redirection(text) {
            if bare_operator(text) {
                words.next();
            }
        } else if !text.starts_with(['-', '+']) {
            return Feeds::Other;
        }
    }
    Feeds::Shell
}

/// `>`, `2>&1`, `<<EOF`, `>>log`: a redirection, not an argument.
fn is_redirection(text: &str) -> bool {
    text.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&')
        .starts_with(['<', '>'])
}

/// A redirection operator written apart from its file or delimiter
/// (`> job.sh`, `<< EOF`): the next word is that file.
fn bare_operator(text: &str) -> bool {
    let op = text.trim_start_matches(|c: char| c.is_ascii_digit());
    matches!(
        op,
        "<" | ">" | ">>" | "<<" | "<<-" | "&>" | "&>>" | "<>" | ">|"
    )
}

/// Whether a `cat` has file arguments (then a here-document is not what
/// it prints).
fn cat_reads_files(cat: &Command) -> bool {
    let mut words = cat
        .words
        .iter()
        .skip_while(|w| basename(&w.text) != "cat")
        .skip(1);
    while let Some(word) = words.next() {
        let text = word.text.as_str();
        if is_redirection(text) {
            if bare_operator(text) {
                words.next();
            }
        } else if text != "-" && !text.starts_with('-') {
            return true;
        }
    }
    false
}

/// A compound command being read.
#[derive(Debug)]
enum Frame {
    /// `if`: its statement, the open branch, and the commands of the
    /// condition being read (`Some` between `if`/`elif` and `then`).
    If {
        statement: usize,
        block: Option<usize>,
        condition: Option<Vec<(usize, usize)>>,
    },
    /// `case WORD in`: the open arm, and the patterns being read (`Some`
    /// before an arm's `)`).
    Case {
        statement: usize,
        subject: usize,
        arm: Option<usize>,
        patterns: Option<Vec<String>>,
    },
    /// `while`/`until`/`for`: `None` before `do`, then its body.
    Loop { block: Option<usize> },
    /// `{ … }` (`paren`: `( … )`), a function's body among them.
    Group { block: usize, paren: bool },
}

/// How far down the stack a closing keyword looks for what it closes.
const REACH: usize = 8;

struct Flow<'a> {
    lexed: &'a Lexed,
    blocks: Vec<Block>,
    command_block: Vec<Option<usize>>,
    stack: Vec<Frame>,
    statements: usize,
    /// A function name was just read (`name ()`, `function name`): the
    /// next group is its body.
    function: bool,
}

/// An open block's end until it is closed.
const OPEN: u32 = u32::MAX;

impl<'a> Flow<'a> {
    fn read(lexed: &'a Lexed, end: usize) -> (Vec<Block>, Vec<Option<usize>>) {
        let mut flow = Flow {
            lexed,
            blocks: Vec::new(),
            command_block: vec![None; lexed.commands.len()],
            stack: Vec::new(),
            statements: 0,
            function: false,
        };
        let tokens = &lexed.tokens;
        let mut placed = vec![false; lexed.commands.len()];
        let mut i = 0;
        while i < tokens.len() {
            match tokens[i] {
                Token::Command(n) => {
                    placed[n] = true;
                    let words = &lexed.commands[n].words;
                    // `name ()` or `function name ()`: a function.
                    if (words.len() == 1 || words.len() == 2 && words[0].text == "function")
                        && matches!(tokens.get(i + 1), Some(Token::Op(Op::Open, _)))
                        && matches!(tokens.get(i + 2), Some(Token::Op(Op::Close, _)))
                        && !flow.in_patterns()
                    {
                        flow.command_block[n] = flow.current();
                        flow.function = true;
                        i += 3;
                        continue;
                    }
                    flow.command(n);
                }
                Token::Op(op, range) => flow.op(op, range),
            }
            i += 1;
        }
        // What is left open ends with the text.
        for block in &mut flow.blocks {
            if block.range.end == OPEN {
                block.range.end = (end as u32).max(block.range.start);
            }
        }
        // A command in a substitution is where the command holding it is:
        // it comes right before it, among the commands not in `tokens`.
        let mut holder = None;
        for n in (0..lexed.commands.len()).rev() {
            if placed[n] {
                holder = flow.command_block[n];
            } else {
                flow.command_block[n] = holder;
            }
        }
        (flow.blocks, flow.command_block)
    }

    fn in_patterns(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame::Case {
                patterns: Some(_),
                ..
            })
        )
    }

    /// The innermost open block.
    fn current(&self) -> Option<usize> {
        self.stack.iter().rev().find_map(|frame| match frame {
            Frame::If { block, .. } => *block,
            Frame::Case { arm, .. } => *arm,
            Frame::Loop { block } => *block,
            Frame::Group { block, .. } => Some(*block),
        })
    }

    fn open(&mut self, kind: BlockKind, statement: usize, at: u32) -> usize {
        let parent = self.current();
        self.blocks.push(Block {
            kind,
            statement,
            condition: Vec::new(),
            patterns: Vec::new(),
            parent,
            range: TextRange {
                start: at,
                end: OPEN,
            },
        });
        self.blocks.len() - 1
    }

    fn close(&mut self, block: Option<usize>, at: u32) {
        if let Some(b) = block
            && self.blocks[b].range.end == OPEN
        {
            self.blocks[b].range.end = at.max(self.blocks[b].range.start);
        }
    }

    fn statement(&mut self) -> usize {
        self.statements += 1;
        self.statements - 1
    }

    /// Pops frames down to the nearest that `matches`, closing what it
    /// pops at `at`; nothing when none is within reach.
    fn pop_to(&mut self, at: u32, matches: impl Fn(&Frame) -> bool) -> Option<Frame> {
        let depth = self.stack.iter().rev().take(REACH).position(&matches)?;
        for _ in 0..=depth {
            let frame = self.stack.pop()?;
            let block = match &frame {
                Frame::If { block, .. } => *block,
                Frame::Case { arm, .. } => *arm,
                Frame::Loop { block } => *block,
                Frame::Group { block, .. } => Some(*block),
            };
            self.close(block, at);
            if matches(&frame) {
                return Some(frame);
            }
        }
        None
    }

    fn top_is(&self, matches: impl Fn(&Frame) -> bool) -> bool {
        self.stack.last().is_some_and(matches)
    }

    /// A simple command: its leading keywords open and close blocks; what
    /// is left of it is a command in the innermost open block.
    fn command(&mut self, n: usize) {
        let words = &self.lexed.commands[n].words;
        if self.in_patterns() {
            self.pattern_words(n);
            return;
        }
        let mut k = 0;
        while let Some(word) = words.get(k) {
            let (start, end) = (word.range.start, word.range.end);
            let is_if = |f: &Frame| matches!(f, Frame::If { .. });
            match keyword(word) {
                Some("if") => {
                    let statement = self.statement();
                    self.stack.push(Frame::If {
                        statement,
                        block: None,
                        condition: Some(Vec::new()),
                    });
                }
                Some("then") if self.top_is(is_if) => self.then(end),
                Some("elif") if self.top_is(is_if) => self.elif(start),
                Some("else") if self.top_is(is_if) => self.else_branch(start, end),
                Some("fi") => {
                    self.pop_to(start, is_if);
                }
                Some("case") => {
                    let statement = self.statement();
                    self.command_block[n] = self.current();
                    self.stack.push(Frame::Case {
                        statement,
                        subject: n,
                        arm: None,
                        patterns: Some(Vec::new()),
                    });
                    return;
                }
                Some("esac") => {
                    self.pop_to(start, |f| matches!(f, Frame::Case { .. }));
                }
                Some("while" | "until") => self.stack.push(Frame::Loop { block: None }),
                Some("for" | "select") => {
                    self.stack.push(Frame::Loop { block: None });
                    self.command_block[n] = self.current();
                    return;
                }
                Some("do") if self.top_is(|f| matches!(f, Frame::Loop { block: None })) => {
                    let statement = self.statement();
                    let b = self.open(BlockKind::Loop, statement, end);
                    self.stack.pop();
                    self.stack.push(Frame::Loop { block: Some(b) });
                }
                Some("done") => {
                    self.pop_to(start, |f| matches!(f, Frame::Loop { .. }));
                }
                Some("{") => self.group(end, false),
                Some("}") => {
                    self.pop_to(start, |f| matches!(f, Frame::Group { paren: false, .. }));
                }
                Some("function") => {
                    self.function = true;
                    k += 2;
                    continue;
                }
                _ => break,
            }
            k += 1;
        }
        if k >= words.len() {
            return;
        }
        self.function = false;
        self.command_block[n] = self.current();
        // Between `if`/`elif`/`while` and `then`/`do`: a condition.
        if let Some(Frame::If {
            condition: Some(condition),
            ..
        }) = self.stack.last_mut()
        {
            condition.push((n, k));
        }
    }

    /// A command between `case WORD in` and an arm's `)`: its words are
    /// patterns, unless it is the `esac` that closes the `case`.
    fn pattern_words(&mut self, n: usize) {
        let words = &self.lexed.commands[n].words;
        if keyword(&words[0]) == Some("esac") {
            self.pop_to(words[0].range.start, |f| matches!(f, Frame::Case { .. }));
        } else if let Some(Frame::Case {
            patterns: Some(patterns),
            ..
        }) = self.stack.last_mut()
        {
            patterns.extend(words.iter().map(|w| w.text.clone()));
        }
        self.command_block[n] = self.current();
    }

    /// `then`, ending at `end`: opens the branch the condition read so far
    /// guards.
    fn then(&mut self, end: u32) {
        let condition = match self.stack.last_mut() {
            Some(Frame::If { condition, .. }) => condition.take().unwrap_or_default(),
            _ => Vec::new(),
        };
        let statement = self.if_statement();
        let b = self.open(BlockKind::Then, statement, end);
        self.blocks[b].condition = condition;
        self.set_if_block(Some(b));
    }

    /// `elif` at `start`: closes the branch open, and a new condition
    /// begins.
    fn elif(&mut self, start: u32) {
        let open = self.if_block();
        self.close(open, start);
        self.set_if_block(None);
        if let Some(Frame::If { condition, .. }) = self.stack.last_mut() {
            *condition = Some(Vec::new());
        }
    }

    /// `else` from `start` to `end`: closes the branch open and opens the
    /// one no condition chose.
    fn else_branch(&mut self, start: u32, end: u32) {
        let open = self.if_block();
        self.close(open, start);
        self.set_if_block(None);
        let statement = self.if_statement();
        let b = self.open(BlockKind::Else, statement, end);
        self.set_if_block(Some(b));
    }

    fn group(&mut self, at: u32, paren: bool) {
        let kind = if std::mem::take(&mut self.function) {
            BlockKind::Function
        } else {
            BlockKind::Group
        };
        let statement = self.statement();
        let block = self.open(kind, statement, at);
        self.stack.push(Frame::Group { block, paren });
    }

    fn if_statement(&self) -> usize {
        match self.stack.last() {
            Some(Frame::If { statement, .. }) => *statement,
            _ => 0,
        }
    }

    fn if_block(&self) -> Option<usize> {
        match self.stack.last() {
            Some(Frame::If { block, .. }) => *block,
            _ => None,
        }
    }

    fn set_if_block(&mut self, new: Option<usize>) {
        if let Some(Frame::If { block, .. }) = self.stack.last_mut() {
            *block = new;
        }
    }

    fn op(&mut self, op: Op, range: TextRange) {
        match op {
            Op::CaseEnd => {
                if let Some(Frame::Case { arm, patterns, .. }) = self.stack.last_mut() {
                    let open = arm.take();
                    *patterns = Some(Vec::new());
                    self.close(open, range.start);
                }
            }
            Op::Close => {
                if let Some(Frame::Case {
                    statement,
                    subject,
                    patterns,
                    ..
                }) = self.stack.last_mut()
                    && let Some(found) = patterns.take()
                {
                    let (statement, subject) = (*statement, *subject);
                    let b = self.open(BlockKind::CaseArm, statement, range.end);
                    self.blocks[b].patterns = found;
                    self.blocks[b].condition = vec![(subject, 1)];
                    if let Some(Frame::Case { arm, .. }) = self.stack.last_mut() {
                        *arm = Some(b);
                    }
                } else if self.top_is(|f| matches!(f, Frame::Group { paren: true, .. })) {
                    self.pop_to(range.start, |f| {
                        matches!(f, Frame::Group { paren: true, .. })
                    });
                }
            }
            // `(pattern)`: the optional parenthesis before a pattern.
            Op::Open if self.in_patterns() => {}
            Op::Open => self.group(range.end, true),
            _ => {}
        }
    }
}

/// A reserved word: unquoted and unexpanded.
fn keyword(word: &Word) -> Option<&str> {
    (!word.dynamic && word.range.len() == word.text.len()).then_some(word.text.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_word(script: &ShellScript, n: usize) -> &str {
        &script.lexed.commands[n].words[0].text
    }

    /// The first command with the word `word`.
    fn command(script: &ShellScript, word: &str) -> usize {
        (0..script.lexed.commands.len())
            .find(|&n| {
                script.lexed.commands[n]
                    .words
                    .iter()
                    .any(|w| w.text == word)
            })
            .unwrap_or_else(|| panic!("no `{word}`"))
    }

    fn condition_text(script: &ShellScript, text: &str, block: &Block) -> String {
        let words: Vec<&str> = script
            .condition(block)
            .flatten()
            .map(|w| &text[w.range.as_range()])
            .collect();
        words.join(" ")
    }

    #[test]
    fn a_heredoc_opened_in_a_substitution_of_a_nested_body_has_a_body_in_it() {
        // Found by the `shell` fuzz target: a here-document opened inside
        // `` `…` `` never reaches a newline of its own, and its body once
        // kept the placeholder range at offset 0, before the nested body.
        let text = "sbatch <<EOF\n#SBATCH --nodes=2\nsrun x `sbatch <<EOF` y\nEOF\n";
        let script = ShellScript::read(text, 7);
        let nested = &script.nested[0].script;
        for heredoc in &nested.lexed.heredocs {
            assert!(heredoc.body.start >= nested.lexed.heredocs[0].operator.start);
            assert!(!heredoc.terminated);
        }
        // The same at the top level, and at the end of a file.
        for text in ["echo `cat <<EOF`", "cat <<EOF"] {
            let script = ShellScript::read(text, 3);
            let heredoc = &script.lexed.heredocs[0];
            // Empty, after its operator and within the text.
            assert!(heredoc.body.is_empty(), "{text:?}");
            assert!(heredoc.body.start >= heredoc.operator.end, "{text:?}");
            assert!(heredoc.body.end as usize <= 3 + text.len(), "{text:?}");
            assert!(!heredoc.terminated);
        }
    }

    #[test]
    fn heredocs_with_their_bodies_and_receivers() {
        let text = "sbatch <<EOF\n#SBATCH -N 2\nsrun hostname\nEOF\ncat <<'X' > job.sbatch\n#SBATCH -N $N\nX\ncat << \"Y\" | sbatch --parsable\necho $A\nY\nbash -x <<-Z\n\tdocker run img\n\tZ\npython - <<P\nprint(1)\nP\nsrun -N 2 bash <<S\nhostname\nS\nbash run.sh <<A\ny\nA\ncat <<U\nunterminated\n";
        let script = ShellScript::read(text, 0);
        let heredocs = &script.lexed.heredocs;
        let found: Vec<(&str, bool, bool, Feeds, &str)> = heredocs
            .iter()
            .map(|h| {
                (
                    h.delimiter.as_str(),
                    h.quoted,
                    h.terminated,
                    script.feeds(h),
                    &text[h.body.as_range()],
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "EOF",
                    false,
                    true,
                    Feeds::Sbatch,
                    "#SBATCH -N 2\nsrun hostname\n"
                ),
                ("X", true, true, Feeds::Other, "#SBATCH -N $N\n"),
                ("Y", true, true, Feeds::Sbatch, "echo $A\n"),
                ("Z", false, true, Feeds::Shell, "\tdocker run img\n"),
                ("P", false, true, Feeds::Other, "print(1)\n"),
                ("S", false, true, Feeds::Shell, "hostname\n"),
                ("A", false, true, Feeds::Other, "y\n"),
                ("U", false, false, Feeds::Other, "unterminated\n"),
            ]
        );
        assert!(heredocs[3].strip_tabs);
        assert_eq!(&text[heredocs[2].operator.as_range()], "<< \"Y\"");
        assert_eq!(first_word(&script, heredocs[1].command), "cat");
        // Bodies that are scripts are read as scripts, ranges in the file;
        // `print(1)` and `y` are data.
        let nested: Vec<usize> = script.nested.iter().map(|s| s.heredoc).collect();
        assert_eq!(nested, [0, 1, 2, 3, 5]);
        let srun = &script.nested[0].script.lexed.commands[0].words[1];
        assert_eq!(&text[srun.range.as_range()], "hostname");
        let docker = &script.nested[3].script.lexed.commands[0];
        assert_eq!(&text[docker.range().as_range()], "docker run img");
        // The body's commands are not the outer script's.
        assert!(script.lexed.commands.iter().all(|c| !matches!(
            c.words[0].text.as_str(),
            "srun" | "docker" | "hostname"
        ) || c.words[0].text == "srun"
            && c.words.len() > 2));
    }

    #[test]
    fn branches_and_their_conditions() {
        let text = "if [ \"${SLURM_NNODES:-1}\" -gt 1 ]; then\n  srun torchrun --rdzv_endpoint $H a.py &\nelif [ -n \"$X\" ] && true\nthen echo one\nelse\n  torchrun b.py &\nfi\ncase \"$P\" in\n  a|b) GPU=1 ;;\n  (*)\n    GPU=2\n    ;;\nesac\nf() {\n  for i in 1 2; do\n    while true; do x; done\n  done\n}\ntail\n";
        let script = ShellScript::read(text, 0);
        let srun = command(&script, "srun");
        let (b, block) = script.blocks_of(srun).next().unwrap();
        assert_eq!(block.kind, BlockKind::Then);
        assert_eq!(
            condition_text(&script, text, block),
            "[ \"${SLURM_NNODES:-1}\" -gt 1 ]"
        );
        let branches: Vec<BlockKind> = script
            .branches(block.statement)
            .map(|(_, b)| b.kind)
            .collect();
        assert_eq!(
            branches,
            [BlockKind::Then, BlockKind::Then, BlockKind::Else]
        );
        let elif = script.branches(block.statement).nth(1).unwrap().1;
        assert_eq!(condition_text(&script, text, elif), "[ -n \"$X\" ] true");
        let torchrun = command(&script, "b.py");
        let (e, other) = script.blocks_of(torchrun).next().unwrap();
        assert_eq!(other.kind, BlockKind::Else);
        assert_eq!(other.statement, block.statement);
        assert_ne!(b, e);
        // The `echo` after `then` on the same line is in the elif branch.
        let echo = command(&script, "echo");
        assert_eq!(script.command_block[echo], Some(b + 1));
        // The else branch's range holds its line, and ends at `fi`.
        let else_text = &text[other.range.as_range()];
        assert_eq!(else_text, "\n  torchrun b.py &\n");
        assert_eq!(script.block_at(text.find("b.py").unwrap()), Some(e));
        // Case arms, with their patterns.
        let arms: Vec<(Vec<String>, &str)> = script
            .blocks
            .iter()
            .filter(|b| b.kind == BlockKind::CaseArm)
            .map(|b| (b.patterns.clone(), text[b.range.as_range()].trim()))
            .collect();
        assert_eq!(
            arms,
            [
                (vec!["a".to_string(), "b".to_string()], "GPU=1"),
                (vec!["*".to_string()], "GPU=2")
            ]
        );
        // A function's loops nest in it; the last command is in none.
        let x = command(&script, "x");
        let kinds: Vec<BlockKind> = script.blocks_of(x).map(|(_, b)| b.kind).collect();
        assert_eq!(
            kinds,
            [BlockKind::Loop, BlockKind::Loop, BlockKind::Function]
        );
        assert_eq!(script.command_block[command(&script, "tail")], None);
    }

    #[test]
    fn substitutions_sit_where_their_command_does() {
        let text = "if a; then\n  X=$(docker run img)\nfi\n";
        let script = ShellScript::read(text, 0);
        let docker = command(&script, "docker");
        assert_eq!(script.command_block[docker], Some(0));
    }

    #[test]
    fn hostile_input_reads_in_linear_time() {
        // Unclosed blocks end with the text; stray closers are ignored.
        let text = "fi\ndone\n}\nesac\n) x\nif a; then\n  while b; do\n    y\n";
        let script = ShellScript::read(text, 0);
        let y = command(&script, "y");
        assert_eq!(script.blocks_of(y).count(), 2);
        assert!(
            script
                .blocks
                .iter()
                .all(|b| b.range.end as usize == text.len())
        );
        // Deep nesting and many here-documents: no recursion, no blow-up.
        let deep = "if a; then\n".repeat(20_000) + &"fi\n".repeat(20_000);
        let script = ShellScript::read(&deep, 0);
        assert_eq!(script.blocks.len(), 20_000);
        let docs = "cat <<A <<B\nx\nA\ny\nB\n".repeat(10_000)
            + "sbatch <<E\nsbatch <<F\nbash <<G\nbash <<H\nbash <<I\nz\n";
        let script = ShellScript::read(&docs, 0);
        assert_eq!(script.lexed.heredocs.len(), 20_001);
        // Here-documents read as scripts nest only so deep.
        let mut inner = &script;
        let mut levels = 1;
        while let Some(n) = inner.nested.first() {
            inner = &n.script;
            levels += 1;
        }
        assert_eq!(levels, MAX_NESTED_SCRIPTS);
        for text in [
            "<<",
            "cat <<",
            "cat <<'",
            "case x in\n(",
            "f ( ) ( (",
            "then else elif",
        ] {
            ShellScript::read(text, 0);
        }
    }
}

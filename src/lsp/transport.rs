//! The stdio transport: `Content-Length` framing of JSON-RPC messages.
//!
//! lsp-server's own stdio reader ends the server on the first malformed
//! message. This one answers a bad frame with a JSON-RPC error (parse error
//! or invalid request) and goes on reading, as JSON-RPC asks of a server.

use crossbeam_channel::{Receiver, Sender, bounded};
use lsp_server::{Connection, Message};
use serde_json::{Value, json};
use std::io::{self, BufRead, Read, Write};
use std::thread;

/// JSON-RPC's code for text that is not JSON.
const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's code for JSON that is not a request, response or notification.
const INVALID_REQUEST: i32 = -32600;

/// The largest message body read: four times the largest file gpulint
/// lints, room for a document's text escaped in JSON. A larger
/// `Content-Length` is answered with an error at once, not waited for.
pub(crate) const MAX_MESSAGE_SIZE: usize = 4 * crate::engine::MAX_FILE_SIZE as usize;

/// How much of a header line is kept: a header is short, and a longer line
/// is garbage whose end alone matters (a `Content-Length` header sent right
/// after a body that had none).
const MAX_HEADER_LINE: usize = 4096;

/// A connection over stdin/stdout, and its reader and writer threads.
pub fn stdio() -> (Connection, IoThreads) {
    let (writer_sender, writer_receiver) = bounded::<Message>(0);
    let writer = thread::Builder::new()
        .name("LspWriter".to_owned())
        .spawn(move || write_messages(&writer_receiver))
        .expect("spawn the writer thread");
    let (reader_sender, reader_receiver) = bounded::<Message>(0);
    let reader = thread::Builder::new()
        .name("LspReader".to_owned())
        .spawn(move || read_messages(&mut io::stdin().lock(), &reader_sender))
        .expect("spawn the reader thread");
    let connection = Connection {
        sender: writer_sender,
        receiver: reader_receiver,
    };
    (connection, IoThreads { reader, writer })
}

pub(crate) struct IoThreads {
    reader: thread::JoinHandle<io::Result<()>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl IoThreads {
    pub fn join(self) -> io::Result<()> {
        let reader = self.reader.join().expect("the reader thread panicked");
        let writer = self.writer.join().expect("the writer thread panicked");
        reader.and(writer)
    }
}

fn write_messages(messages: &Receiver<Message>) -> io::Result<()> {
    for message in messages {
        // Locked per message (and flushed): the reader writes its error
        // replies in between.
        message.write(&mut io::stdout().lock())?;
    }
    Ok(())
}

/// Reads frames until end of input or `exit`, passing messages on and
/// answering bad ones itself.
fn read_messages(input: &mut impl BufRead, messages: &Sender<Message>) -> io::Result<()> {
    while let Some(frames) = read_frame(input)? {
        for frame in frames {
            let message = match frame {
                Ok(body) => parse(&body),
                Err(reason) => Err((PARSE_ERROR, reason, Value::Null)),
            };
            match message {
                Ok(message) => {
                    let is_exit =
                        matches!(&message, Message::Notification(n) if n.method == "exit");
                    if messages.send(message).is_err() || is_exit {
                        return Ok(());
                    }
                }
                Err((code, reason, id)) => {
                    let reply = json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": { "code": code, "message": reason },
                    });
                    write_frame(&mut io::stdout().lock(), &reply.to_string())?;
                }
            }
        }
    }
    Ok(())
}

/// A message, or the error code, reason and id (when it could be read) to
/// answer it with.
fn parse(body: &[u8]) -> Result<Message, (i32, String, Value)> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| (PARSE_ERROR, format!("parse error: {e}"), Value::Null))?;
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    serde_json::from_value(value).map_err(|e| {
        (
            INVALID_REQUEST,
            format!("invalid request: not a JSON-RPC request, response or notification ({e})"),
            id,
        )
    })
}

fn write_frame(out: &mut dyn Write, body: &str) -> io::Result<()> {
    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    out.flush()
}

/// A message's body, or why a frame has none.
type Frame = Result<Vec<u8>, String>;

/// The next frame's body, or why it has none; `None` at end of input.
///
/// Lines that are not headers are skipped and reported, but a
/// `Content-Length` header run onto such a line (a body sent without a
/// header, then a proper frame) still frames the body after it, so one bad
/// message does not swallow the ones after it: then there are two results,
/// the error and the body.
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Vec<Frame>>> {
    const CONTENT_LENGTH: &str = "content-length:";
    let mut length: Option<Result<usize, String>> = None;
    let mut garbage = false;
    let mut seen_any = false;
    let mut line = Vec::new();
    loop {
        if !read_header_line(input, &mut line)? {
            // End of input: a half-read frame has no body to answer.
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            if seen_any {
                break;
            }
            continue;
        }
        seen_any = true;
        let lower = text.to_ascii_lowercase();
        let header = match lower.find(CONTENT_LENGTH) {
            Some(0) => text,
            Some(at) => {
                garbage = true;
                &text[at..]
            }
            None => text,
        };
        match header.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                length =
                    Some(value.trim().parse().map_err(|_| {
                        format!("parse error: bad Content-Length `{}`", value.trim())
                    }));
            }
            Some((name, _)) if is_token(name) => {}
            _ => garbage = true,
        }
    }
    let mut results = Vec::new();
    if garbage {
        results.push(Err("parse error: malformed message header".into()));
    }
    let length = match length {
        None if garbage => return Ok(Some(results)),
        None => {
            return Ok(Some(vec![Err(
                "parse error: no Content-Length header".into()
            )]));
        }
        Some(Err(reason)) => {
            results.push(Err(reason));
            return Ok(Some(results));
        }
        Some(Ok(length)) if length > MAX_MESSAGE_SIZE => {
            // Its body, if it ever comes, is skipped as garbage up to the
            // next header: waiting for it could mean waiting for gigabytes.
            results.push(Err(format!(
                "parse error: Content-Length {length} is over the limit of {MAX_MESSAGE_SIZE} bytes"
            )));
            return Ok(Some(results));
        }
        Some(Ok(length)) => length,
    };
    let mut body = Vec::new();
    // Grows only as bytes arrive: a huge Content-Length costs nothing up front.
    input.take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        // End of input inside the body.
        return Ok(None);
    }
    results.push(Ok(body));
    Ok(Some(results))
}

/// Reads one line into `line` (cleared first), keeping at most
/// [`MAX_HEADER_LINE`] bytes of it: its start and its end (where a header
/// run onto garbage sits), so an endless line costs bounded memory. False
/// at the end of input with nothing read.
fn read_header_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<bool> {
    line.clear();
    let mut read_any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(read_any);
        }
        read_any = true;
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..=at], true),
            None => (available, false),
        };
        line.extend_from_slice(chunk);
        let used = chunk.len();
        input.consume(used);
        if line.len() > MAX_HEADER_LINE {
            // Keep the first and the last half: enough to see that it is
            // garbage and to find a header at its end.
            let half = MAX_HEADER_LINE / 2;
            line.drain(half..line.len() - half);
        }
        if done {
            return Ok(true);
        }
    }
}

/// An HTTP header name.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &str) -> Vec<Result<String, String>> {
        let mut input = input.as_bytes();
        std::iter::from_fn(|| read_frame(&mut input).unwrap())
            .flatten()
            .map(|f| f.map(|b| String::from_utf8(b).unwrap()))
            .collect()
    }

    #[test]
    fn bad_frames_are_reported_and_reading_goes_on() {
        let frames = frames(concat!(
            "Content-Length: 5\r\n\r\n{bad}",
            "Content-Type: text\r\n\r\n",
            "{\"unframed\": 1}Content-Length: 2\r\n\r\n[]",
            "Content-Length: x\r\n\r\n",
            "content-length: 2\n\n{}",
        ));
        assert_eq!(
            frames,
            [
                Ok("{bad}".into()),
                Err("parse error: no Content-Length header".into()),
                Err("parse error: malformed message header".into()),
                Ok("[]".into()),
                Err("parse error: bad Content-Length `x`".into()),
                Ok("{}".into()),
            ]
        );
    }

    #[test]
    fn a_content_length_over_the_limit_is_refused_without_waiting_for_it() {
        // No body follows: reading it would wait (here: hit the end of
        // input and drop the frame); the error comes from the header alone.
        let huge = MAX_MESSAGE_SIZE + 1;
        let frames = frames(&format!(
            "Content-Length: {huge}\r\n\r\n{{\"jsonrpc\":\"2.0\"}}Content-Length: 2\r\n\r\n{{}}"
        ));
        assert_eq!(
            frames,
            [
                Err(format!(
                    "parse error: Content-Length {huge} is over the limit of {MAX_MESSAGE_SIZE} bytes"
                )),
                Err("parse error: malformed message header".into()),
                Ok("{}".into()),
            ]
        );
    }

    #[test]
    fn an_endless_header_line_is_kept_to_its_ends() {
        let mut input = Vec::new();
        input.extend(std::iter::repeat_n(b'x', 10 * MAX_HEADER_LINE));
        input.extend_from_slice(b"Content-Length: 2\r\n\r\n[]");
        let mut reader = std::io::BufReader::with_capacity(64, &input[..]);
        let mut line = Vec::new();
        assert!(read_header_line(&mut reader, &mut line).unwrap());
        assert!(line.len() <= MAX_HEADER_LINE + 64, "{}", line.len());
        assert!(line.ends_with(b"Content-Length: 2\r\n"));
        let frames: Vec<_> = std::iter::from_fn(|| read_frame(&mut &input[..]).unwrap())
            .take(1)
            .flatten()
            .collect();
        assert_eq!(
            frames,
            [
                Err("parse error: malformed message header".into()),
                Ok(b"[]".to_vec())
            ]
        );
    }

    #[test]
    fn bodies_that_are_not_messages_are_told_apart() {
        assert_eq!(parse(b"{bad}").unwrap_err().0, PARSE_ERROR);
        let (code, _, id) = parse(b"[]").unwrap_err();
        assert_eq!((code, id), (INVALID_REQUEST, Value::Null));
        let (code, _, id) = parse(br#"{"jsonrpc":"2.0","id":7,"method":3}"#).unwrap_err();
        assert_eq!((code, id), (INVALID_REQUEST, json!(7)));
        assert!(parse(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#).is_ok());
    }
}

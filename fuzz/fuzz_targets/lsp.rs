//! The language server, in process: `gpulint::lsp::serve` on an in-memory
//! connection, after a real `initialize`, gets the fuzzed messages and then
//! `shutdown`/`exit`; every input is a fresh server.
//!
//! The first byte picks how the rest is read:
//! - `F`: a stream of framed messages (`Content-Length: N\r\n\r\n{...}`);
//! - `J`: raw JSON values, each sent if it is a message;
//! - any other byte: document text, opened under the name that byte picks
//!   (`common::KINDS`), then hovered, code-actioned (quick fixes and fix
//!   all), edited incrementally at positions taken from the text's first
//!   bytes, and closed.
//!
//! Bytes that are not a message are dropped here: the stdio framing of bad
//! input is tested in tests/it/lsp.rs, and message orders by the
//! lsp_lifecycle target.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let messages = match mode {
        b'F' => framed(rest),
        b'J' => raw_json(rest),
        kind => {
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            document_session(kind, text)
        }
    };
    if messages.iter().any(known_bug) {
        return;
    }
    serve(messages);
});

fn framed(bytes: &[u8]) -> Vec<Message> {
    let mut reader = bytes;
    let mut messages = Vec::new();
    while let Ok(Some(message)) = Message::read(&mut reader) {
        messages.push(message);
    }
    messages
}

fn raw_json(bytes: &[u8]) -> Vec<Message> {
    serde_json::Deserializer::from_slice(bytes)
        .into_iter::<Value>()
        .map_while(Result::ok)
        .filter_map(|value| serde_json::from_value(value).ok())
        .collect()
}

/// Opens `text`, asks about it, edits it and closes it.
fn document_session(kind: u8, text: &str) -> Vec<Message> {
    let uri = format!("file://{}/{}", common::ROOT, common::kind_name(kind));
    let document = json!({ "uri": uri });
    // Positions from the text's own bytes, so the fuzzer steers them.
    let at = |i: usize| u32::from(text.as_bytes().get(i).copied().unwrap_or(0) % 16);
    let (line, character) = (at(0), at(1));
    let whole = json!({
        "start": { "line": 0, "character": 0 },
        "end": { "line": 1_000_000, "character": 0 },
    });
    let cursor = json!({ "line": line, "character": character });
    let code_action = |id: i32, only: Option<&str>| {
        let mut context = json!({ "diagnostics": [] });
        if let Some(only) = only {
            context["only"] = json!([only]);
        }
        request(
            id,
            "textDocument/codeAction",
            json!({ "textDocument": document, "range": whole, "context": context }),
        )
    };
    let hover = |id: i32| {
        request(
            id,
            "textDocument/hover",
            json!({ "textDocument": document, "position": cursor }),
        )
    };
    vec![
        notification(
            "textDocument/didOpen",
            json!({ "textDocument": {
                "uri": uri, "languageId": "yaml", "version": 1, "text": text,
            }}),
        ),
        hover(1),
        code_action(2, None),
        code_action(3, Some("source.fixAll.gpulint")),
        notification(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": 2 },
                "contentChanges": [
                    { "range": {
                        "start": { "line": line, "character": character },
                        "end": { "line": line + at(2) % 3, "character": at(3) },
                    }, "text": "\n\t- x: ${Y}" },
                ],
            }),
        ),
        hover(4),
        code_action(5, Some("quickfix")),
        notification("textDocument/didSave", json!({ "textDocument": document })),
        notification("textDocument/didClose", json!({ "textDocument": document })),
    ]
}

fn request(id: i32, method: &str, params: Value) -> Message {
    Request::new(RequestId::from(id), method.to_string(), params).into()
}

fn notification(method: &str, params: Value) -> Message {
    Notification::new(method.to_string(), params).into()
}

/// Known bugs the fuzzer should not spend its time on (see `common`):
/// none at the moment.
fn known_bug(_message: &Message) -> bool {
    false
}

/// One server from `initialize` to `exit`, given `messages` between.
fn serve(messages: Vec<Message>) {
    let (server, client) = Connection::memory();
    let thread = std::thread::spawn(move || {
        let _ = gpulint::lsp::serve(server);
    });
    let Connection { sender, receiver } = client;
    let _ = sender.send(request(0, "initialize", json!({ "capabilities": {} })));
    let _ = sender.send(notification("initialized", json!({})));
    for message in messages {
        let _ = sender.send(message);
    }
    let _ = sender.send(request(i32::MAX, "shutdown", Value::Null));
    let _ = sender.send(notification("exit", Value::Null));
    drop(sender);
    thread.join().expect("the server thread panicked");
    drop(receiver);
}

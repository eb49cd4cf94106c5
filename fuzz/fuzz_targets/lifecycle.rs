//! The language server's lifecycle under random message orders: each input
//! byte is one message (initialize with good or bad params, initialized,
//! shutdown, exit, document notifications, requests, cancellations,
//! responses, unknown methods), sent in that order to `lsp::serve` on an
//! in-memory connection, then `exit` (or, by the last byte, the client
//! going away). A model of the LSP 3.17 lifecycle says what each request's
//! answer must be, and the check fails when:
//! - the server returns before `exit` or the end of input, or does not
//!   return after it;
//! - a request gets no answer, two answers, or an answer of the wrong kind
//!   for its state (ServerNotInitialized before `initialize`, InvalidParams
//!   for an `initialize` whose params do not deserialize, InvalidRequest
//!   for a second `initialize` and for anything after `shutdown`, never an
//!   internal error);
//! - the server sends a notification or request before answering
//!   `initialize`, or anything but answers after `shutdown`;
//! - the ending is not the one the specification asks for (exit status 0
//!   only after `shutdown`).
//!
//! Used by fuzz_targets/lsp_lifecycle.rs and by tests/it/fuzz_regressions.rs,
//! which replays kept inputs without a nightly toolchain.

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const SERVER_NOT_INITIALIZED: i32 = -32002;
const INVALID_REQUEST: i32 = -32600;
const INVALID_PARAMS: i32 = -32602;
const METHOD_NOT_FOUND: i32 = -32601;
const INTERNAL_ERROR: i32 = -32603;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Uninitialized,
    Running,
    ShutDown,
}

/// What a request's answer must be.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    /// A result (any value).
    Result,
    /// A result that is exactly this.
    ResultOf(Value),
    /// An error with this code.
    Error(i32),
    /// A result, or an error the request's own params or method explain
    /// (InvalidParams, MethodNotFound), never an internal error.
    Served,
}

const URI: &str = "file:///nonexistent-gpulint-fuzz/compose.yaml";
const TEXTS: &[&str] = &[
    "services:\n  t:\n    image: nvcr.io/nvidia/pytorch:24.01-py3\n    gpus: all\n    command: torchrun --nproc_per_node=8 train.py\n",
    "services: {}\n",
    "services:\n  t: [\n",
    "",
];

/// Runs one input through the server and checks it against the model.
pub fn run(data: &[u8]) {
    let (server, client) = Connection::memory();
    let thread = std::thread::spawn(move || gpulint::lsp::serve(server));
    let Connection { sender, receiver } = client;

    let mut state = State::Uninitialized;
    let mut expected: BTreeMap<RequestId, (String, Expect)> = BTreeMap::new();
    let mut next_id = 0;
    let mut exited = false;
    let mut bytes = data.iter().copied();
    let mut version = 1;
    while let Some(op) = bytes.next() {
        let arg = bytes.clone().next().unwrap_or(0);
        next_id += 1;
        // Some ids are strings: the protocol allows both.
        let id = if next_id % 5 == 0 {
            RequestId::from(format!("r{next_id}"))
        } else {
            RequestId::from(next_id)
        };
        let mut request = |method: &str, params: Value, expect: Expect| {
            expected.insert(id.clone(), (method.to_string(), expect));
            Message::from(Request::new(id.clone(), method.to_string(), params))
        };
        let served = |state: State| match state {
            State::Uninitialized => Expect::Error(SERVER_NOT_INITIALIZED),
            State::Running => Expect::Served,
            State::ShutDown => Expect::Error(INVALID_REQUEST),
        };
        let message = match op % 16 {
            0 => {
                let expect = match state {
                    State::Uninitialized => Expect::Result,
                    _ => Expect::Error(INVALID_REQUEST),
                };
                // Dynamic registration of watched files now and then: the
                // server asks for it after `initialized`.
                let capabilities = if arg % 2 == 0 {
                    json!({})
                } else {
                    json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}})
                };
                let message = request(
                    "initialize",
                    json!({"capabilities": capabilities, "processId": null}),
                    expect,
                );
                if state == State::Uninitialized {
                    state = State::Running;
                }
                message
            }
            1 => {
                let params = match arg % 4 {
                    0 => Value::Null,
                    1 => json!({"capabilities": arg}),
                    2 => json!({"capabilities": {}, "processId": "not a number"}),
                    _ => json!("initialize"),
                };
                let expect = match state {
                    State::Uninitialized => Expect::Error(INVALID_PARAMS),
                    _ => Expect::Error(INVALID_REQUEST),
                };
                request("initialize", params, expect)
            }
            2 => notification("initialized", json!({})),
            3 => {
                let expect = match state {
                    State::Running => Expect::ResultOf(Value::Null),
                    other => served(other),
                };
                let message = request("shutdown", Value::Null, expect);
                if state == State::Running {
                    state = State::ShutDown;
                }
                message
            }
            4 => {
                exited = true;
                notification("exit", Value::Null)
            }
            5 => notification(
                "textDocument/didOpen",
                json!({"textDocument": {
                    "uri": URI, "languageId": "yaml", "version": version,
                    "text": TEXTS[usize::from(arg) % TEXTS.len()],
                }}),
            ),
            6 => {
                version += 1;
                notification(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": URI, "version": version},
                        "contentChanges": [{"text": TEXTS[usize::from(arg) % TEXTS.len()]}],
                    }),
                )
            }
            7 => notification(
                "textDocument/didClose",
                json!({"textDocument": {"uri": URI}}),
            ),
            8 => request(
                "textDocument/hover",
                json!({"textDocument": {"uri": URI},
                       "position": {"line": arg % 6, "character": arg % 9}}),
                served(state),
            ),
            9 => request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": URI},
                       "range": {"start": {"line": 0, "character": 0},
                                 "end": {"line": arg % 8, "character": 0}},
                       "context": {"diagnostics": []}}),
                served(state),
            ),
            10 => notification("$/cancelRequest", json!({"id": next_id - 1})),
            11 => request("gpulint/unknown", json!({}), served(state)),
            12 => notification("$/unknownNotification", json!({"x": arg})),
            13 => Response::new_ok(RequestId::from(format!("gpulint-{arg}")), Value::Null).into(),
            14 => notification(
                "textDocument/didSave",
                json!({"textDocument": {"uri": URI}}),
            ),
            _ => request("textDocument/hover", Value::Null, served(state)),
        };
        if sender.send(message).is_err() {
            panic!("the server stopped reading before `exit`");
        }
        if exited {
            break;
        }
    }
    // The end of input, or `exit`: both end the session.
    let go_away = data.last().is_some_and(|b| b % 3 == 0);
    if !exited && !go_away {
        let _ = sender.send(notification("exit", Value::Null));
        exited = true;
    }
    if exited {
        // `exit` alone must end it: the connection stays open meanwhile.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !thread.is_finished() {
            assert!(
                std::time::Instant::now() < deadline,
                "the server did not end on `exit`"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    drop(sender);
    let ending = thread
        .join()
        .expect("the server thread panicked")
        .expect("serve returned an error");
    let expected_ending = if state == State::ShutDown {
        gpulint::lsp::Ending::AfterShutdown
    } else {
        gpulint::lsp::Ending::WithoutShutdown
    };
    assert_eq!(ending, expected_ending, "the session's ending");

    let mut answered = BTreeMap::new();
    let mut initialized = false;
    let mut shut_down = false;
    for message in receiver.try_iter() {
        match message {
            Message::Response(response) => {
                let Some((method, expect)) = expected.get(&response.id) else {
                    panic!("an answer to a request never sent: {response:?}");
                };
                assert!(
                    answered.insert(response.id.clone(), ()).is_none(),
                    "a second answer to {method} {}",
                    response.id
                );
                check(method, expect, &response);
                if method == "initialize" && response.response_result.is_ok() {
                    initialized = true;
                }
                if method == "shutdown" && response.response_result.is_ok() {
                    shut_down = true;
                }
            }
            other => {
                assert!(
                    initialized,
                    "the server sent {other:?} before answering `initialize`"
                );
                assert!(
                    !shut_down,
                    "the server sent {other:?} after answering `shutdown`"
                );
            }
        }
    }
    for (id, (method, _)) in &expected {
        assert!(answered.contains_key(id), "{method} {id} got no answer");
    }
}

fn check(method: &str, expect: &Expect, response: &Response) {
    let code = response.response_result.as_ref().err().map(|e| e.code);
    let ok = match (expect, &response.response_result) {
        (Expect::Result, Ok(_)) => true,
        (Expect::ResultOf(value), Ok(result)) => result == value,
        (Expect::Error(want), Err(error)) => error.code == *want,
        (Expect::Served, Ok(_)) => true,
        (Expect::Served, Err(error)) => {
            error.code != INTERNAL_ERROR && matches!(error.code, INVALID_PARAMS | METHOD_NOT_FOUND)
        }
        _ => false,
    };
    assert!(
        ok,
        "{method} {}: expected {expect:?}, got {:?} (code {code:?})",
        response.id, response.response_result
    );
}

fn notification(method: &str, params: Value) -> Message {
    Notification::new(method.to_string(), params).into()
}

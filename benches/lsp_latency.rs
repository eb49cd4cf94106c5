//! Language-server latency: the time from a `didChange` to the
//! `publishDiagnostics` it causes, for a 2,000-line multi-document
//! Kubernetes manifest, through the real server loop (in-memory transport).
//! The figure includes the server's debounce (`gpulint::lsp::DEBOUNCE`),
//! which is printed alongside, with the lint alone.
//!
//! `cargo bench --bench lsp_latency`. Under `cargo test` it runs once, as a
//! smoke test.

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::json;
use std::time::{Duration, Instant};

fn manifest(lines: usize) -> String {
    let document = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer-N\nspec:\n  selector:\n    matchLabels: {app: trainer-N}\n  template:\n    metadata:\n      labels: {app: trainer-N}\n    spec:\n      containers:\n        - name: trainer\n          image: nvcr.io/nvidia/pytorch:24.01-py3\n          env:\n            - {name: NCCL_DEBUG, value: INFO}\n          resources:\n            limits:\n              nvidia.com/gpu: 8\n";
    let mut text = String::new();
    let mut n = 0;
    while text.lines().count() < lines {
        text.push_str(&document.replace('N', &n.to_string()));
        n += 1;
    }
    text
}

fn send(connection: &Connection, method: &str, params: serde_json::Value) {
    connection
        .sender
        .send(Message::Notification(Notification::new(
            method.to_string(),
            params,
        )))
        .unwrap();
}

fn wait_for_diagnostics(connection: &Connection) -> usize {
    loop {
        match connection
            .receiver
            .recv_timeout(Duration::from_secs(30))
            .unwrap()
        {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                return n.params["diagnostics"].as_array().unwrap().len();
            }
            _ => {}
        }
    }
}

fn main() {
    let iterations = if std::env::args().any(|a| a == "--bench") {
        40
    } else {
        1
    };
    let text = manifest(2000);
    let lines = text.lines().count();

    let config = gpulint::engine::config::Config::default();
    let path = std::path::PathBuf::from("/bench/deploy.yaml");
    let started = Instant::now();
    for _ in 0..iterations {
        gpulint::engine::check_text(path.clone(), text.clone(), &config);
    }
    let lint = started.elapsed() / iterations;

    let (client, server) = Connection::memory();
    let handle = std::thread::spawn(move || gpulint::lsp::serve(server).unwrap());
    client
        .sender
        .send(Message::Request(Request::new(
            RequestId::from(1),
            "initialize".to_string(),
            json!({"capabilities": {}, "processId": null, "rootUri": null}),
        )))
        .unwrap();
    let _ = client.receiver.recv().unwrap();
    send(&client, "initialized", json!({}));
    let uri = "file:///bench/deploy.yaml";
    send(
        &client,
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
    );
    let findings = wait_for_diagnostics(&client);

    let mut samples = Vec::new();
    for i in 0..iterations {
        // One keystroke in the last document's image tag.
        let line = lines as u32 - 6;
        let started = Instant::now();
        send(
            &client,
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": i + 2},
                "contentChanges": [{"range": {"start": {"line": line, "character": 10}, "end": {"line": line, "character": 10}}, "text": " "}],
            }),
        );
        wait_for_diagnostics(&client);
        samples.push(started.elapsed());
    }
    samples.sort();
    let median = samples[samples.len() / 2];
    let p95 = samples[(samples.len() * 95 / 100).min(samples.len() - 1)];
    println!(
        "lsp_latency: {lines}-line manifest, {findings} findings; didChange -> publishDiagnostics median {:.1} ms, p95 {:.1} ms over {iterations} edits (debounce {} ms); lint alone {:.1} ms",
        median.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3,
        gpulint::lsp::DEBOUNCE.as_millis(),
        lint.as_secs_f64() * 1e3
    );

    client
        .sender
        .send(Message::Request(Request::new(
            RequestId::from(2),
            "shutdown".to_string(),
            json!(null),
        )))
        .unwrap();
    let _ = client.receiver.recv();
    send(&client, "exit", json!(null));
    handle.join().unwrap();
}

"""gpulint server driven by a real LSP client (pytest-lsp / pygls), over stdio,
as an editor does: open a file, get the shm diagnostic at the right range,
ask for code actions, apply the quick fix, and see the diagnostic go.

Run by tests/it/editor.rs with GPULINT_BIN set to the binary under test."""

import os
import pathlib

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

GPU_COMPOSE = """services:
  trainer:
    image: nvcr.io/nvidia/pytorch:24.01-py3
    command: torchrun --nproc_per_node=8 train.py
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
"""

GPU_DEPLOYMENT = """apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: nvcr.io/nvidia/pytorch:24.01-py3
          resources:
            limits:
              nvidia.com/gpu: 8
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[os.environ["GPULINT_BIN"], "server"])
)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                text_document=types.TextDocumentClientCapabilities(
                    code_action=types.CodeActionClientCapabilities(
                        code_action_literal_support=types.ClientCodeActionLiteralOptions(
                            code_action_kind=types.ClientCodeActionKindOptions(
                                value_set=[types.CodeActionKind.QuickFix]
                            )
                        )
                    )
                )
            )
        )
    )
    yield
    await lsp_client.shutdown_session()


async def diagnostics_after(client: LanguageClient, uri: str, action):
    """Runs `action`, then waits for the diagnostics it causes."""
    client.diagnostics.pop(uri, None)
    action()
    for _ in range(200):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if uri in client.diagnostics:
            return client.diagnostics[uri]
    raise AssertionError(f"no diagnostics for {uri}")


def apply(text: str, edits) -> str:
    """Applies LSP TextEdits (UTF-16 positions) to text, as an editor does."""
    lines = text.splitlines(keepends=True)

    def offset(position):
        before = "".join(lines[: position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units, chars = 0, 0
        for ch in line:
            if units >= position.character:
                break
            units += 2 if ord(ch) > 0xFFFF else 1
            chars += 1
        return len(before) + chars

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


async def open_fix_and_recheck(client, tmp_path, name, language, text, code, expected_range):
    path = pathlib.Path(tmp_path) / name
    path.write_text(text)
    uri = path.as_uri()
    found = await diagnostics_after(
        client,
        uri,
        lambda: client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language, version=1, text=text
                )
            )
        ),
    )
    finding = next(d for d in found if d.code == code)
    assert finding.source == "gpulint"
    assert finding.range == expected_range, finding.range

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=finding.range,
            context=types.CodeActionContext(
                diagnostics=[finding], only=[types.CodeActionKind.QuickFix]
            ),
        )
    )
    fixes = [a for a in actions if a.is_preferred]
    assert fixes, [a.title for a in actions]
    assert any(a.title.startswith(f"Suppress {code}") for a in actions)
    fixed = apply(text, fixes[0].edit.changes[uri])
    assert fixed != text

    after = await diagnostics_after(
        client,
        uri,
        lambda: client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
            )
        ),
    )
    assert code not in [d.code for d in after], after
    return fixed


async def test_compose_shm_quick_fix(client: LanguageClient, tmp_path):
    fixed = await open_fix_and_recheck(
        client,
        tmp_path,
        "docker-compose.yml",
        "dockercompose",
        GPU_COMPOSE,
        "SHM001",
        types.Range(start=types.Position(line=1, character=2), end=types.Position(line=1, character=9)),
    )
    assert '    shm_size: "8gb"\n' in fixed


async def test_kubernetes_shm_quick_fix(client: LanguageClient, tmp_path):
    fixed = await open_fix_and_recheck(
        client,
        tmp_path,
        "job.yaml",
        "yaml",
        GPU_DEPLOYMENT,
        "K8S004",
        types.Range(start=types.Position(line=9, character=16), end=types.Position(line=9, character=23)),
    )
    assert "mountPath: /dev/shm" in fixed and "medium: Memory" in fixed


async def test_hover_shows_the_rule_doc(client: LanguageClient, tmp_path):
    path = pathlib.Path(tmp_path) / "compose.yaml"
    path.write_text(GPU_COMPOSE)
    uri = path.as_uri()
    await diagnostics_after(
        client,
        uri,
        lambda: client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="yaml", version=1, text=GPU_COMPOSE
                )
            )
        ),
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=1, character=4),
        )
    )
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value.startswith("# default-shm-on-gpu-service (SHM001)")

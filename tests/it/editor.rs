//! The language server as an editor sees it: `gpulint server` over stdio,
//! driven by a real LSP client (pygls, through pytest-lsp) in
//! tests/editor/test_lsp_client.py. It opens a GPU compose file and a
//! Kubernetes Job, checks the /dev/shm diagnostic's range, applies the
//! offered quick fix and sees the diagnostic disappear, and reads a hover.

use crate::common;

use std::process::Command;

#[test]
#[ignore = "needs a Python with pytest-lsp (GPULINT_LSP_PYTHON): installed by .ci/run"]
fn a_real_lsp_client_gets_diagnostics_quick_fixes_and_hover() {
    let python = common::required_tool(
        "GPULINT_LSP_PYTHON",
        "pytest-lsp-python",
        "a Python with `pip install pytest-lsp`",
    );
    let out = Command::new(python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/editor",
        ])
        .current_dir(common::root())
        .env("GPULINT_BIN", env!("CARGO_BIN_EXE_gpulint"))
        .output()
        .unwrap();
    let printed = common::stdout(&out) + &common::stderr(&out);
    assert!(out.status.success(), "{printed}");
    assert!(printed.contains("3 passed"), "{printed}");
}

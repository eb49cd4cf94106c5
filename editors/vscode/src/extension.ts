// A thin client: VS Code starts `gpulint server` and speaks LSP to it; every
// feature (diagnostics, quick fixes, fix all, hover) lives in the server.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";
// Which documents gpulint lints and which files it watches: kept as data
// so that tests/it/editor.rs checks them against the kinds of file the
// server classifies (`FileKind::of`).
import * as files from "./files.json";

let client: LanguageClient | undefined;
let watchers: vscode.FileSystemWatcher[] = [];

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  await start();
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("gpulint.path")) {
        await stop();
        await start();
      }
    }),
  );
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  const command = vscode.workspace.getConfiguration("gpulint").get<string>("path") || "gpulint";
  const serverOptions: ServerOptions = { command, args: ["server"] };
  watchers = files.watch.map((glob) => vscode.workspace.createFileSystemWatcher(glob));
  const clientOptions: LanguageClientOptions = {
    // Languages, for buffers whose language the user or another extension
    // set (an untitled Dockerfile, a script told by its `#!` line), and file
    // patterns, for what VS Code names by no language of its own (Quadlet
    // units, `*.sbatch`, `Dockerfile_amd`) or names by one that is not only
    // gpulint's (a `devcontainer.json` is `jsonc`, as is every settings file).
    documentSelector: files.documentSelector,
    synchronize: {
      // Findings depend on these files even when they are not open: a
      // compose file on its `.env` and the Dockerfiles it builds, every file
      // on gpulint.toml.
      fileEvents: watchers,
    },
  };
  client = new LanguageClient("gpulint", "gpulint", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (error) {
    void vscode.window.showErrorMessage(
      `gpulint: could not start \`${command} server\` (set gpulint.path): ${error}`,
    );
  }
}

async function stop(): Promise<void> {
  if (client) {
    await client.stop();
    client = undefined;
  }
  // A restart makes new ones.
  for (const watcher of watchers) {
    watcher.dispose();
  }
  watchers = [];
}

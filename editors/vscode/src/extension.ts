// A thin client: VS Code starts `gpulint server` and speaks LSP to it; every
// feature (diagnostics, quick fixes, fix all, hover) lives in the server.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

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
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "yaml" },
      { scheme: "file", language: "dockercompose" },
      { scheme: "file", language: "dockerfile" },
      { scheme: "untitled", language: "dockerfile" },
      // `docker run` lines and SLURM batch scripts.
      { scheme: "file", language: "shellscript" },
      { scheme: "file", language: "makefile" },
      { scheme: "file", language: "markdown" },
    ],
    synchronize: {
      // Findings depend on these files even when they are not open.
      fileEvents: vscode.workspace.createFileSystemWatcher(
        "**/{gpulint.toml,*.yml,*.yaml,*Dockerfile*,*Containerfile*,*.sh,*.sbatch,*.slurm,Makefile,*.mk,*.md}",
      ),
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
}

// Starts `decision lsp` for DECISION.md files and hands it the settings: everything the
// editor shows — diagnostics, hover, completion, definitions, rename, quick fixes — comes
// from the language server; the extension adds only the grammar.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

/** The settings `decision lsp` reads, under the `decision` key. */
function serverSettings(): { profile: string | null; capabilities: string | null } {
  const config = vscode.workspace.getConfiguration('decision');
  return {
    profile: config.get<string | null>('profile', null),
    capabilities: config.get<string | null>('capabilities', null),
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = vscode.workspace.getConfiguration('decision').get<string>('path', 'decision');
  const serverOptions: ServerOptions = { command, args: ['lsp'] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'decision' }],
    initializationOptions: { decision: serverSettings() },
    synchronize: { configurationSection: 'decision' },
  };
  client = new LanguageClient('decision', 'DECISION.md', serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('decision.path')) {
        void vscode.window.showInformationMessage('Reload the window to start the new `decision` command.');
      }
    }),
  );
  try {
    await client.start();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    void vscode.window.showErrorMessage(
      `Cannot start \`${command} lsp\`: ${message}. Install \`decision\` (cargo install --path crates/cli) or set decision.path.`,
    );
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}

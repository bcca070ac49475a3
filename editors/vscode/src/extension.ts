// VS Code client of dsh-refls: starts the server over stdio for Markdown,
// plain text and dsh-prompt documents, keeps its settings in sync, adds the
// "DSH: Prepare Message", "DSH: Show Index Status", "DSH: Search Sessions",
// "DSH: Forget Picks" and "DSH: Continue From Session…" commands, and opens their results, and the recall preview of a session,
// as read-only documents of the dsh-refls: scheme. A server that announces
// LSP 3.18 workspace/textDocumentContent for that scheme serves them (the
// language client registers the provider); for any other server the
// extension serves them itself. Everything that does not need VS Code
// lives in serverPath.ts, settings.ts, present.ts and views.ts.

import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions as ProcessOptions,
  State,
  TextDocumentContentRequest,
  TransportKind,
} from "vscode-languageclient/node";

import {
  describeError,
  FORGET_PICKS_COMMAND,
  presentForgotten,
  presentPrepared,
  presentStatus,
  PrepareResult,
} from "./present";
import { CONTINUE_CAPABILITY, CONTINUE_COMMAND, continueResult, continueSessionOf, sessionPicks } from "./continueFrom";
import { searchSessions } from "./searchCommand";
import { findServer, ServerNotFoundError } from "./serverPath";
import {
  KeptViews,
  preparedPaths,
  preparedViewUris,
  SESSION_SCHEME,
  serverServesViews,
  STATUS_PATH,
  VIEW_SCHEME,
  viewKind,
} from "./views";
import {
  didChangeConfigurationParams,
  ExpandContext,
  MachineSettingsKeeper,
  mapSettings,
  missingPaths,
  SettingInspection,
  SettingProblem,
  unappliedMachineSettings,
  prepareMode,
  RESTART_SETTINGS,
  SECTION,
  SERVER_OPTION_KINDS,
  serverArgs,
} from "./settings";

/** Languages the server is started for. */
const LANGUAGES = ["markdown", "plaintext", "dsh-prompt"];

/** Name of the output channel that shows server stderr and client messages. */
const CHANNEL_NAME = "DSH References";

/** Client id; VS Code reads `dsh.trace.server` for it. */
const CLIENT_ID = "dsh";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel | undefined;
/**
 * Whether the running server serves the dsh-refls: documents itself
 * (workspace/textDocumentContent); when it does not, ownViews is the
 * extension's provider of that scheme.
 */
let serverViews = false;
let ownViews: vscode.Disposable | undefined;

/** The values settings expand `~` and `${workspaceFolder}` against. */
function expandContext(): ExpandContext {
  return { home: os.homedir(), workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath };
}

/** Every `dsh.*` setting as a plain object, for the pure mapping functions. */
function rawSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const raw: Record<string, unknown> = {};
  for (const key of [...Object.keys(SERVER_OPTION_KINDS), ...RESTART_SETTINGS, "prepareMode"]) {
    raw[key] = config.get(key);
  }
  return raw;
}

/** Problems already shown in a notification, so that each is shown once per window. */
const notified = new Set<string>();

/** Logs setting problems and shows each new one to the user once. */
function reportProblems(problems: SettingProblem[], verb: string): void {
  for (const p of problems) {
    const line = `Setting ${p.setting} ${verb}: it ${p.reason}.`;
    output?.appendLine(line);
    if (!notified.has(line)) {
      notified.add(line);
      void vscode.window.showWarningMessage(`DSH: ${line}`);
    }
  }
}

/** What VS Code says of every machine setting, for unappliedMachineSettings. */
function machineInspections(): SettingInspection[] {
  const config = vscode.workspace.getConfiguration(SECTION);
  return ["serverPath", "logFile", "sessionsRoot", "spillDir"].map((key) => {
    const i = config.inspect(key);
    return {
      key,
      globalValue: i?.globalValue,
      workspaceValue: i?.workspaceValue,
      workspaceFolderValue: i?.workspaceFolderValue,
      effective: config.get(key),
    };
  });
}

/** The machine settings delivered so far, for those VS Code stops delivering. */
const keeper = new MachineSettingsKeeper();

/**
 * Every `dsh.*` setting, with the machine settings VS Code stopped
 * delivering put back as last delivered (and reported). change is the
 * configuration change being handled, if any: a setting it touches is
 * taken as it is now, cleared included.
 */
function deliveredSettings(change?: vscode.ConfigurationChangeEvent): { raw: Record<string, unknown>; kept: SettingProblem[] } {
  const { raw, problems } = keeper.keep(
    rawSettings(),
    change ? (key) => change.affectsConfiguration(`${SECTION}.${key}`) : undefined,
    vscode.env.remoteName,
  );
  reportProblems(problems, "kept");
  return { raw, kept: problems };
}

/** Maps the settings to server options, reporting any setting that had to be left out, was kept or cannot apply. */
function serverOptions(change?: vscode.ConfigurationChangeEvent) {
  const { raw, kept } = deliveredSettings(change);
  const mapped = mapSettings(raw, expandContext());
  reportProblems(mapped.problems, "ignored");
  // A kept setting has had its warning already.
  const unapplied = unappliedMachineSettings(machineInspections(), vscode.env.remoteName);
  reportProblems(unapplied.filter((p) => !kept.some((k) => k.setting === p.setting)), "not in effect");
  reportProblems(missingPaths(mapped.options, (p) => fs.existsSync(p)), "cannot be applied");
  return mapped.options;
}

/** Says in the output which sessions root the server reads and how many sessions it found. */
async function logSessionsRoot(c: LanguageClient): Promise<void> {
  try {
    const st = await c.sendRequest<{ sessionsRoot?: string; sessionsIndexed?: number; building?: boolean }>("dsh/status", {});
    const count = st.building ? "indexing" : `${st.sessionsIndexed ?? 0} sessions`;
    output?.appendLine(`Sessions root ${st.sessionsRoot ?? "(none)"}: ${count}.`);
  } catch (err) {
    output?.appendLine(`dsh/status failed: ${describeError(err)}`);
  }
}

/** Creates and starts a client for the binary the settings point at. */
async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const { raw } = deliveredSettings();
  const ctx = expandContext();
  let location;
  try {
    location = findServer({
      configured: typeof raw["serverPath"] === "string" ? (raw["serverPath"] as string) : undefined,
      envPath: process.env["PATH"],
      envPathExt: process.env["PATHEXT"],
      platform: process.platform,
      arch: process.arch,
      extensionDir: context.extensionPath,
      workspaceFolder: ctx.workspaceFolder,
      home: ctx.home,
    });
  } catch (err) {
    if (err instanceof ServerNotFoundError) {
      output?.appendLine(err.message);
      for (const t of err.tried) {
        output?.appendLine(`  tried ${t}`);
      }
      void vscode.window.showErrorMessage(`DSH: ${err.message}`);
      return;
    }
    throw err;
  }
  output?.appendLine(`Starting ${location.path} (found via ${location.source}).`);

  const run = { command: location.path, args: serverArgs(raw, ctx), transport: TransportKind.stdio };
  const processOptions: ProcessOptions = { run, debug: run };
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.flatMap((language) => [
      { scheme: "file", language },
      { scheme: "untitled", language },
    ]),
    initializationOptions: () => serverOptions(),
    outputChannel: output,
    middleware: {
      // The code action "Continue from this session" runs the server's
      // command: its answer is opened as a new prompt.
      executeCommand: async (command, args, next) => {
        const res = await next(command, args);
        if (command === CONTINUE_COMMAND) {
          await openContinued(res);
        }
        return res;
      },
      workspace: {
        // Answer configuration requests for "dsh" with the mapped options, not
        // the raw settings (which hold client-only keys and nulls).
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) {
            return answers;
          }
          return params.items.map((item, i) => (item.section === SECTION ? serverOptions() : answers[i]));
        },
      },
    },
  };
  client = new LanguageClient(CLIENT_ID, CHANNEL_NAME, processOptions, clientOptions);
  client.registerFeature(opensPrompts);
  await client.start();
  // One provider per scheme: the language client's when the server serves
  // the views, else the extension's.
  serverViews = serverServesViews(client.initializeResult);
  if (!serverViews) {
    ownViews = vscode.workspace.registerTextDocumentContentProvider(VIEW_SCHEME, views);
  }
  output?.appendLine(`Views of the ${VIEW_SCHEME}: scheme are served by ${serverViews ? "the server (workspace/textDocumentContent)" : "the extension"}.`);
  void logSessionsRoot(client);
}

/** Stops the running client, if any. */
async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  ownViews?.dispose();
  ownViews = undefined;
  serverViews = false;
  if (c && c.state !== State.Stopped) {
    await c.stop();
  }
}

/** The running client, or undefined after telling the user why there is none. */
function runningClient(): LanguageClient | undefined {
  if (!client || client.state !== State.Running) {
    void vscode.window.showErrorMessage("DSH: the dsh-refls server is not running; see the DSH References output.");
    return undefined;
  }
  return client;
}

/** "DSH: Prepare Message": prepares the active document and opens message and context side by side. */
async function prepareMessage(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage("DSH: open the message to prepare first.");
    return;
  }
  const c = runningClient();
  if (!c) {
    return;
  }
  const doc = editor.document;
  const mode = prepareMode(rawSettings());
  // Documents the server tracks are named by URI so that it prepares exactly
  // the text it has seen; any other document is sent as text.
  const synced = (doc.uri.scheme === "file" || doc.uri.scheme === "untitled") && LANGUAGES.includes(doc.languageId);
  // A server that serves the views keeps their texts and names them.
  const viewsParam = serverViews ? { views: true } : {};
  const params = synced
    ? { textDocument: { uri: c.code2ProtocolConverter.asUri(doc.uri) }, mode, ...viewsParam }
    : { text: doc.getText(), mode, ...viewsParam };
  let result: PrepareResult;
  try {
    result = await c.sendRequest<PrepareResult>("dsh/prepare", params);
  } catch (err) {
    void vscode.window.showErrorMessage(`DSH: preparing failed: ${describeError(err)}`);
    return;
  }
  const shown = presentPrepared(result);
  if (serverViews) {
    const uris = preparedViewUris(result);
    if (!uris) {
      void vscode.window.showErrorMessage("DSH: the server answered dsh/prepare without the views it serves.");
      return;
    }
    for (const uri of [uris.message, uris.context]) {
      if (uri !== undefined) {
        await showDocument(vscode.Uri.parse(uri), { viewColumn: vscode.ViewColumn.Beside, preview: false });
      }
    }
    void vscode.window.showInformationMessage(`DSH: ${shown.summary}`);
    return;
  }
  preparedCount++;
  const paths = preparedPaths(preparedCount);
  const views: Record<string, string> = { [paths.message]: shown.message };
  if (shown.context !== undefined) {
    views[paths.context] = shown.context;
  }
  kept.addPrepared(views);
  await showView(paths.message, { viewColumn: vscode.ViewColumn.Beside, preview: false });
  if (shown.context !== undefined) {
    await showView(paths.context, { viewColumn: vscode.ViewColumn.Beside, preview: false });
  }
  void vscode.window.showInformationMessage(`DSH: ${shown.summary}`);
}

/** "DSH: Show Index Status": asks the server for its index facts and shows them. */
async function showIndexStatus(): Promise<void> {
  const c = runningClient();
  if (!c) {
    return;
  }
  if (serverViews) {
    // The server writes the status as it is asked for it; an open status
    // document is told to ask again.
    const uri = viewUri(STATUS_PATH);
    for (const p of c.getFeature(TextDocumentContentRequest.method)?.getProviders() ?? []) {
      if (p.scheme === VIEW_SCHEME) {
        p.onDidChangeEmitter.fire(uri);
      }
    }
    await showDocument(uri, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    return;
  }
  let status: unknown;
  try {
    status = await c.sendRequest("dsh/status", {});
  } catch (err) {
    void vscode.window.showErrorMessage(`DSH: status failed: ${describeError(err)}`);
    return;
  }
  kept.set(STATUS_PATH, presentStatus(status));
  views.changed(viewUri(STATUS_PATH));
  await showView(STATUS_PATH, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}

/**
 * "DSH: Forget Picks": the server forgets which sessions and files were
 * picked from the @ menu in this workspace (frecency), and its file of them.
 * The language client registers the server's own command under the same
 * name for item commands; the request is sent here so that the answer can
 * be shown.
 */
async function forgetPicks(): Promise<void> {
  const c = runningClient();
  if (!c) {
    return;
  }
  try {
    const res = await c.sendRequest("workspace/executeCommand", { command: FORGET_PICKS_COMMAND, arguments: [] });
    void vscode.window.showInformationMessage(`DSH: ${presentForgotten(res)}`);
  } catch (err) {
    void vscode.window.showErrorMessage(`DSH: forgetting the picks failed: ${describeError(err)}`);
  }
}

/** Declares that the extension opens the prompts CONTINUE_COMMAND answers. */
const opensPrompts = {
  fillClientCapabilities(caps: { experimental?: object }): void {
    caps.experimental = { ...(caps.experimental ?? {}), [CONTINUE_CAPABILITY]: true };
  },
  initialize(): void {},
  getState(): { kind: "static" } {
    return { kind: "static" };
  },
  clear(): void {},
};

/** Opens the answer of CONTINUE_COMMAND as a new untitled Markdown prompt, the cursor at its end. */
async function openContinued(res: unknown): Promise<void> {
  let text: string;
  try {
    text = continueResult(res).text;
  } catch (err) {
    void vscode.window.showErrorMessage(`DSH: ${describeError(err)}`);
    return;
  }
  const doc = await vscode.workspace.openTextDocument({ content: text, language: "markdown" });
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  const end = doc.positionAt(text.length);
  editor.selection = new vscode.Selection(end, end);
}

/**
 * "DSH: Continue From Session…": the session mention under the cursor
 * (the server's code action there says which), or else one picked from
 * the sessions the server ranks first; opens the new prompt.
 */
async function continueFromSession(): Promise<void> {
  const c = runningClient();
  if (!c) {
    return;
  }
  let id: string | undefined;
  const editor = vscode.window.activeTextEditor;
  const doc = editor?.document;
  if (editor && doc && (doc.uri.scheme === "file" || doc.uri.scheme === "untitled") && LANGUAGES.includes(doc.languageId)) {
    try {
      const actions = await c.sendRequest("textDocument/codeAction", {
        textDocument: { uri: c.code2ProtocolConverter.asUri(doc.uri) },
        range: c.code2ProtocolConverter.asRange(editor.selection),
        context: { diagnostics: [] },
      });
      id = continueSessionOf(actions);
    } catch (err) {
      output?.appendLine(`textDocument/codeAction failed: ${describeError(err)}`);
    }
  }
  if (id === undefined) {
    let picks;
    try {
      picks = sessionPicks(await c.sendRequest("dsh/candidates", { query: "" }));
    } catch (err) {
      void vscode.window.showErrorMessage(`DSH: listing the sessions failed: ${describeError(err)}`);
      return;
    }
    const picked = await vscode.window.showQuickPick(picks, { title: "Continue from session", placeHolder: "Session to continue from", matchOnDetail: true });
    if (!picked) {
      return;
    }
    id = picked.sessionId;
  }
  let res: unknown;
  try {
    res = await c.sendRequest("workspace/executeCommand", { command: CONTINUE_COMMAND, arguments: [id] });
  } catch (err) {
    void vscode.window.showErrorMessage(`DSH: continuing from the session failed: ${describeError(err)}`);
    return;
  }
  await openContinued(res);
}

/** Texts of the prepared message and status views. */
const kept = new KeptViews();
/** Number of the last prepared message, naming its views. */
let preparedCount = 0;

/** The dsh-refls: URI of a view path. */
function viewUri(path: string): vscode.Uri {
  return vscode.Uri.from({ scheme: VIEW_SCHEME, path });
}

/** Opens a view (read-only, never asks to be saved) in an editor. */
async function showView(path: string, options: vscode.TextDocumentShowOptions): Promise<void> {
  await showDocument(viewUri(path), options);
}

/** Opens a document of the dsh-refls: scheme, whoever serves it, in an editor. */
async function showDocument(uri: vscode.Uri, options: vscode.TextDocumentShowOptions): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, options);
}

/**
 * Serves the read-only documents of the dsh-refls: scheme (kept texts and
 * session recall previews) for a server that does not serve them, and of
 * dsh-session: (the link a Markdown mention is) for every server.
 */
class ViewProvider implements vscode.TextDocumentContentProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  /** Tells VS Code that the text of an open view changed. */
  changed(uri: vscode.Uri): void {
    this.emitter.fire(uri);
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    if (viewKind(uri.scheme, uri.path) === "kept") {
      return kept.get(uri.path);
    }
    const c = client;
    if (!c || c.state !== State.Running) {
      return "# No preview\n\nThe dsh-refls server is not running; see the DSH References output.\n";
    }
    try {
      const res = await c.sendRequest<{ markdown: string }>("dsh/preview", { uri: uri.toString(true) }, token);
      return res.markdown;
    } catch (err) {
      return `# No preview\n\n${describeError(err)}\n`;
    }
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

const views = new ViewProvider();

/** Activates the extension: starts the server and registers commands and listeners. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel(CHANNEL_NAME, { log: true });
  context.subscriptions.push(output);

  context.subscriptions.push(
    views,
    { dispose: () => ownViews?.dispose() },
    vscode.workspace.registerTextDocumentContentProvider(SESSION_SCHEME, views),
    vscode.commands.registerCommand("dsh.prepareMessage", prepareMessage),
    vscode.commands.registerCommand("dsh.showIndexStatus", showIndexStatus),
    vscode.commands.registerCommand("dsh.searchSessions", () =>
      searchSessions({
        client: runningClient,
        openView: (path) => showView(path, { preview: true }),
        openAt: (uri, selection) => showDocument(vscode.Uri.parse(uri), { preview: true, selection }),
      }),
    ),
    vscode.commands.registerCommand("dsh.forgetPicks", forgetPicks),
    vscode.commands.registerCommand("dsh.continueFromSession", continueFromSession),
    vscode.commands.registerCommand("dsh.restartServer", async () => {
      await stopClient();
      await startClient(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration(SECTION)) {
        // A remote window drops a User value of a machine setting in a
        // change of other settings: it is kept and said at once.
        deliveredSettings(e);
        return;
      }
      // The server replaces its options with what it is sent, so only the
      // process settings need a new server.
      if (RESTART_SETTINGS.some((key) => e.affectsConfiguration(`${SECTION}.${key}`))) {
        // Taking this change's machine settings first: one it clears stays
        // cleared in the new server.
        deliveredSettings(e);
        output?.appendLine("Server settings changed; restarting dsh-refls.");
        await stopClient();
        await startClient(context);
        return;
      }
      if (client && client.state === State.Running) {
        await client.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(serverOptions(e)));
      }
    }),
  );

  await startClient(context);
}

/** Deactivates the extension: shuts the server down cleanly. */
export async function deactivate(): Promise<void> {
  await stopClient();
}

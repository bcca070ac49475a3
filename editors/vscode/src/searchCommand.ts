// The "DSH: Search Sessions" command: a QuickPick that asks dsh/search on
// every change of its value (the previous request cancelled), lists the
// sessions with the excerpt around the hit, opens the chosen session's
// read-only recall preview at the message of the hit, the hit's words
// selected, and inserts a mention of it at the cursor from
// the row's button. The logic that needs no VS Code is in search.ts.

import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";

import { describeError } from "./present";
import { hitLocation, isSearchOff, LatestSearch, previewPath, searchItems, SearchResult, sessionMention } from "./search";

/** Most sessions one answer lists. */
const SEARCH_LIMIT = 20;

/** The setting that switches body search on. */
const RECALL_SETTING = "dsh.recallSearch";

/** The row button that inserts a mention instead of opening the preview. */
const INSERT_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon("insert"),
  tooltip: "Insert a mention of this session at the cursor",
};

/** A picker row: a session, or a note (search off, an error) with what choosing it does. */
interface Row extends vscode.QuickPickItem {
  sessionId?: string;
  title?: string;
  /** The seq of the message the preview opens at, and the query whose hit it selects. */
  seq?: number;
  query?: string;
  openSettings?: boolean;
}

/** What the command needs from the extension. */
export interface SearchDeps {
  /** The running client, or undefined after telling the user why there is none. */
  client: () => LanguageClient | undefined;
  /** Opens a dsh-refls: view path (a session preview) in an editor. */
  openView: (path: string) => Promise<void>;
  /** Opens a dsh-refls: URI in an editor with range selected and revealed. */
  openAt: (uri: string, range: vscode.Range) => Promise<void>;
}

/**
 * Opens the preview of a row's session at the message its hit is in, the
 * hit's words selected (dsh/preview with the seq and the query); the
 * preview's top when the row has no seq or the server names no location.
 */
async function openHit(c: LanguageClient, deps: SearchDeps, row: Row): Promise<void> {
  if (row.seq !== undefined && row.query) {
    try {
      const at = hitLocation(await c.sendRequest("dsh/preview", { sessionId: row.sessionId, seq: row.seq, query: row.query }));
      if (at) {
        const { start, end } = at.selection;
        await deps.openAt(at.uri, new vscode.Range(start.line, start.character, end.line, end.character));
        return;
      }
    } catch (err) {
      void vscode.window.showWarningMessage(`DSH: cannot open the preview at the hit: ${describeError(err)}`);
    }
  }
  await deps.openView(previewPath(row.sessionId ?? "", row.title ?? ""));
}

/** Inserts a session mention at the cursor of editor, replacing the selection. */
async function insertMention(editor: vscode.TextEditor | undefined, row: Row): Promise<void> {
  if (!editor || editor.document.uri.scheme === "dsh-refls" || !row.sessionId) {
    void vscode.window.showInformationMessage("DSH: open the message to write first, then search again to insert a mention.");
    return;
  }
  const mention = sessionMention(row.title ?? "", row.sessionId);
  await editor.edit((b) => b.replace(editor.selection, mention));
  await vscode.window.showTextDocument(editor.document, editor.viewColumn);
}

/** "DSH: Search Sessions". */
export async function searchSessions(deps: SearchDeps): Promise<void> {
  const c = deps.client();
  if (!c) {
    return;
  }
  // The editor a mention goes into: the one active when the command started.
  const editor = vscode.window.activeTextEditor;
  const pick = vscode.window.createQuickPick<Row>();
  pick.title = "Search Sessions";
  pick.placeholder = 'Words said in a session (all must occur), or "an exact phrase"';
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  let tokens: vscode.CancellationTokenSource | undefined;
  const search = new LatestSearch<SearchResult[]>(
    async (query, signal) => {
      tokens?.dispose();
      const source = (tokens = new vscode.CancellationTokenSource());
      signal.addEventListener("abort", () => source.cancel());
      return c.sendRequest<SearchResult[]>("dsh/search", { query, limit: SEARCH_LIMIT }, source.token);
    },
    (state) => {
      pick.busy = state.kind === "busy";
      switch (state.kind) {
        case "empty":
          pick.items = [];
          break;
        case "done":
          // alwaysShow: the server has narrowed the list; VS Code's own filter
          // must not hide a session whose title lacks the words.
          pick.items = searchItems(state.results, Date.now()).map((it) => ({ ...it, query: state.query, alwaysShow: true, buttons: [INSERT_BUTTON] }));
          break;
        case "failed":
          pick.items = isSearchOff(state.error)
            ? [{
              label: "$(circle-slash) Searching what was said in sessions is off",
              detail: `Choose this to open the setting ${RECALL_SETTING}.`,
              alwaysShow: true,
              openSettings: true,
            }]
            : [{ label: "$(error) The search failed", detail: describeError(state.error), alwaysShow: true }];
          break;
      }
    },
  );
  const done = new Promise<void>((resolve) => {
    pick.onDidChangeValue((value) => void search.update(value));
    pick.onDidAccept(async () => {
      const row = pick.selectedItems[0];
      if (!row) {
        return;
      }
      pick.hide();
      if (row.openSettings) {
        await vscode.commands.executeCommand("workbench.action.openSettings", RECALL_SETTING);
      } else if (row.sessionId) {
        await openHit(c, deps, row);
      }
    });
    pick.onDidTriggerItemButton(async (e) => {
      pick.hide();
      await insertMention(editor, e.item);
    });
    pick.onDidHide(() => {
      search.dispose();
      tokens?.dispose();
      pick.dispose();
      resolve();
    });
  });
  pick.show();
  await done;
}

// Drives the real dsh-refls binary over stdio the way the extension does:
// the binary found by findServer, initializationOptions from mapSettings,
// didChangeConfiguration from didChangeConfigurationParams, and the answers
// of dsh/prepare and dsh/status through present.ts. The Go test
// editors/vscode_test.go sets the environment; without it the suite skips.

import { strict as assert } from "node:assert";
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";

import {
  CompletionItem,
  CompletionList,
  createProtocolConnection,
  DidChangeConfigurationNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  ProtocolConnection,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver-protocol/node";

import { presentPrepared, presentStatus, PrepareResult } from "../present";
import { hitLocation, isSearchOff, searchItems, SearchResult, sessionMention } from "../search";
import { findServer } from "../serverPath";
import { didChangeConfigurationParams, mapSettings } from "../settings";

const env = {
  bin: process.env["DSH_REFLS_BIN"],
  root: process.env["DSH_E2E_SESSIONS_ROOT"],
  workspace: process.env["DSH_E2E_WORKSPACE"],
  mention: process.env["DSH_E2E_SESSION_MENTION"],
  title: process.env["DSH_E2E_SESSION_TITLE"],
};
const skip = !env.bin || !env.root || !env.workspace || !env.mention || !env.title
  ? "DSH_REFLS_BIN and DSH_E2E_* are not set (go test ./editors/ sets them)"
  : false;

/** Milliseconds to wait for the first index build to show a session. */
const INDEX_WAIT_MS = 10000;

describe("extension logic against the real server", { skip }, () => {
  let proc: ChildProcess;
  let conn: ProtocolConnection;
  let stderr = "";
  let exitCode: Promise<number | null>;
  let exited = false;
  let binDir = "";
  const uri = () => pathToFileURL(path.join(env.workspace!, "vscode-message.md")).toString();

  before(async () => {
    // The lookup the extension does, with a directory holding only this
    // binary (under the name the extension looks for) on PATH.
    binDir = fs.mkdtempSync(path.join(os.tmpdir(), "dsh-refls-bin-"));
    fs.symlinkSync(path.resolve(env.bin!), path.join(binDir, "dsh-refls"));
    const found = findServer({
      envPath: binDir,
      platform: process.platform,
      arch: process.arch,
      extensionDir: path.join(env.workspace!, "no-extension"),
    });
    assert.deepEqual(found, { path: path.join(binDir, "dsh-refls"), source: "PATH" });
    proc = spawn(found.path, ["--log-level", "debug"], { stdio: ["pipe", "pipe", "pipe"] });
    proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    exitCode = new Promise((resolve) =>
      proc.on("exit", (code) => {
        exited = true;
        resolve(code);
      }),
    );
    conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    conn.listen();
    // The server asks for a progress token during the first index build.
    conn.onRequest("window/workDoneProgress/create", () => null);

    const mapped = mapSettings({ sessionsRoot: env.root, maxReferenceBytes: 65536, watch: "auto", sessionId: "" });
    assert.deepEqual(mapped.problems, []);
    const init = await conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: pathToFileURL(env.workspace!).toString(),
      workspaceFolders: [{ uri: pathToFileURL(env.workspace!).toString(), name: "workspace" }],
      capabilities: {
        general: { positionEncodings: ["utf-16"] },
        textDocument: { completion: { completionItem: { labelDetailsSupport: true } }, hover: { contentFormat: ["markdown", "plaintext"] } },
      },
      initializationOptions: mapped.options,
    });
    assert.ok(init.capabilities.completionProvider, "no completion provider");
    await conn.sendNotification(InitializedNotification.type, {});
  });

  after(async () => {
    if (binDir !== "") {
      fs.rmSync(binDir, { recursive: true, force: true });
    }
    if (!conn) {
      return;
    }
    assert.equal(exited, false, `the server exited early; stderr:\n${stderr}`);
    await conn.sendRequest(ShutdownRequest.type);
    await conn.sendNotification(ExitNotification.type);
    const code = await exitCode;
    conn.dispose();
    assert.equal(code, 0, `server exited with ${code}; stderr:\n${stderr}`);
  });

  /** Sends a request; fails with the server's stderr if the server exits first. */
  function request<T>(method: string, params: object): Promise<T> {
    if (exited) {
      return Promise.reject(new Error(`the server has exited; stderr:\n${stderr}`));
    }
    const died = exitCode.then((code): T => {
      throw new Error(`the server exited with ${code} during ${method}; stderr:\n${stderr}`);
    });
    // Whichever settles first decides; the other must not be reported as unhandled.
    died.catch(() => undefined);
    const sent = (async () => (await conn.sendRequest(method, params)) as T)();
    sent.catch(() => undefined);
    return Promise.race([sent, died]);
  }

  /** Completion items at the end of a one-line document. */
  async function complete(text: string, version: number): Promise<{ items: CompletionItem[]; isIncomplete: boolean }> {
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: uri(), languageId: "markdown", version, text },
    });
    const result = (await request("textDocument/completion", {
      textDocument: { uri: uri() },
      position: { line: 0, character: text.length },
    })) as CompletionList | CompletionItem[] | null;
    await conn.sendNotification("textDocument/didClose", { textDocument: { uri: uri() } });
    if (!result) {
      return { items: [], isIncomplete: false };
    }
    return Array.isArray(result) ? { items: result, isIncomplete: false } : result;
  }

  it("completes sessions with the options the extension sends", async () => {
    const deadline = Date.now() + INDEX_WAIT_MS;
    let items: CompletionItem[] = [];
    let version = 1;
    while (Date.now() < deadline) {
      items = (await complete("See @", version++)).items;
      if (items.some((i) => i.textEdit && "newText" in i.textEdit && i.textEdit.newText === env.mention)) {
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const session = items.find((i) => i.textEdit && "newText" in i.textEdit && i.textEdit.newText === env.mention);
    assert.ok(session, `no item inserts ${env.mention}: ${JSON.stringify(items.map((i) => i.label))}`);
    assert.equal(session.label, env.title);
  });

  it("rejects an invalid option sent through the mapping with INVALID_CONFIG", async () => {
    const resp = await request("dsh/prepare", { text: `Look at ${env.mention}`, maxReferenceBytes: -5 })
      .then(() => undefined, (err: { data?: { code?: string } }) => err);
    assert.ok(resp, "a negative maxReferenceBytes must fail");
    assert.match(String(resp.data?.code), /^SESSION_REFERENCE_(INVALID_CONFIG|INVALID_REFERENCE)$/);
  });

  it("prepares a message into what Prepare Message shows", async () => {
    const result = await request<PrepareResult>("dsh/prepare", { text: `Look at ${env.mention} please` });
    const shown = presentPrepared(result);
    assert.equal(shown.message, `Look at @${env.title} please`);
    assert.ok(shown.context?.includes("<referenced-sessions>"), shown.context);
    assert.match(shown.summary, /^Prepared with 1 session reference/);
  });

  it("shows the index status", async () => {
    const status = await request<unknown>("dsh/status", {});
    const text = presentStatus(status);
    assert.match(text, /^# dsh-refls index status\n/);
    assert.ok(fs.existsSync(env.root!));
  });
  it("applies didChangeConfiguration as the extension sends it", async () => {
    const before = await complete("See @", 100);
    const sessionsBefore = before.items.filter((i) => i.kind === 18).length;
    assert.ok(sessionsBefore > 3, `want more than 3 sessions before the change, got ${sessionsBefore}`);
    for (const [limit, version] of [[1, 101], [3, 102]]) {
      const next = mapSettings({ sessionsRoot: env.root, candidateLimit: limit }).options;
      await conn.sendNotification(DidChangeConfigurationNotification.type, didChangeConfigurationParams(next));
      const got = await complete("See @", version);
      const sessions = got.items.filter((i) => i.kind === 18).length;
      assert.equal(sessions, limit, `candidateLimit ${limit} should leave ${limit} sessions, got ${sessions}`);
      assert.equal(got.isIncomplete, true, "a capped list must be incomplete");
    }
    // Clearing the setting returns it to its default without a restart.
    await conn.sendNotification(
      DidChangeConfigurationNotification.type,
      didChangeConfigurationParams(mapSettings({ sessionsRoot: env.root }).options),
    );
    const cleared = await complete("See @", 103);
    assert.equal(cleared.items.filter((i) => i.kind === 18).length, sessionsBefore, "a cleared candidateLimit must return to its default");
    // The server keeps preparing with the changed options.
    const result = await request<PrepareResult>("dsh/prepare", { text: `Again ${env.mention}` });
    assert.ok(presentPrepared(result).context?.includes("<referenced-sessions>"));
  });

  it("finds a session by what was said in it, as Search Sessions lists and mentions it", async () => {
    // Off, the search says so in the way the command recognises.
    await conn.sendNotification(
      DidChangeConfigurationNotification.type,
      didChangeConfigurationParams(mapSettings({ sessionsRoot: env.root, recallSearch: false }).options),
    );
    const off = await request("dsh/search", { query: "twenty times" }).then(() => undefined, (err: unknown) => err);
    assert.ok(isSearchOff(off), `dsh/search with recallSearch off: ${JSON.stringify(off)}`);
    await conn.sendNotification(
      DidChangeConfigurationNotification.type,
      didChangeConfigurationParams(mapSettings({ sessionsRoot: env.root, recallSearch: true }).options),
    );
    // The body index builds after the switch: ask until it answers.
    const deadline = Date.now() + INDEX_WAIT_MS;
    let results: SearchResult[] = [];
    while (Date.now() < deadline) {
      results = await request<SearchResult[]>("dsh/search", { query: "twenty times", limit: 20 });
      if (results.length > 0) {
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const rows = searchItems(results, Date.now());
    assert.equal(rows[0]?.label, env.title, JSON.stringify(results));
    assert.match(rows[0].detail, /^user: .*twenty times/);
    assert.match(rows[0].description, /created \d+ d ago$/);
    // Enter on the row opens the preview at the hit's message, its words
    // selected: the first word's hit, or the whole phrase when quoted.
    assert.equal(rows[0].seq, results[0].matches?.[0]?.seq);
    const words = await request<{ markdown: string }>("dsh/preview", { sessionId: rows[0].sessionId, seq: rows[0].seq, query: "twenty times" });
    const first = hitLocation(words);
    assert.ok(first, `dsh/preview at seq ${rows[0].seq} names no location: ${JSON.stringify(words).slice(0, 300)}`);
    assert.equal(words.markdown.split("\n")[first.selection.start.line].slice(first.selection.start.character, first.selection.end.character), "twenty");
    const answer = await request<{ markdown: string }>("dsh/preview", { sessionId: rows[0].sessionId, seq: rows[0].seq, query: '"twenty times"' });
    const at = hitLocation(answer);
    assert.ok(at, `dsh/preview at seq ${rows[0].seq} names no location: ${JSON.stringify(answer).slice(0, 300)}`);
    const line = answer.markdown.split("\n")[at.selection.start.line];
    assert.equal(at.selection.end.line, at.selection.start.line);
    assert.equal(line.slice(at.selection.start.character, at.selection.end.character).toLowerCase(), "twenty times");
    // The mention the row's button inserts is the one the server writes.
    const cands = await request<{ sessionId: string; mention: string }[]>("dsh/candidates", { query: env.title });
    const server = cands.find((c) => c.sessionId === rows[0].sessionId);
    assert.ok(server, `dsh/candidates ${JSON.stringify(env.title)} lacks ${rows[0].sessionId}: ${JSON.stringify(cands)}`);
    assert.equal(sessionMention(rows[0].title, rows[0].sessionId), server.mention);
    await conn.sendNotification(
      DidChangeConfigurationNotification.type,
      didChangeConfigurationParams(mapSettings({ sessionsRoot: env.root }).options),
    );
  });
});

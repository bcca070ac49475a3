// Black-box client test of dsh-refls: starts the binary, speaks LSP to it over
// real pipes with vscode-languageserver-protocol, and checks initialize (with
// and without utf-8), completion, resolve, hover, diagnostics, dsh/prepare, a
// cancelled request, shutdown and the exit code.
//
// Environment: DSH_REFLS_BIN (the binary), DSH_REFLS_SESSIONS (a session root
// holding the shared fixtures), DSH_REFLS_WORKSPACE (a directory), and
// DSH_REFLS_OUT (a file that receives the dsh/prepare result for the Go side
// to compare with sessionref). Exits non-zero with a message on any failure.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import {
  createProtocolConnection, StreamMessageReader, StreamMessageWriter,
  CancellationTokenSource, InitializeRequest, CompletionRequest,
  CompletionResolveRequest, HoverRequest, ShutdownRequest, ExitNotification,
  DidOpenTextDocumentNotification, InitializedNotification,
  PublishDiagnosticsNotification,
} from 'vscode-languageserver-protocol/node.js';

const bin = process.env.DSH_REFLS_BIN;
const sessions = process.env.DSH_REFLS_SESSIONS;
const workspace = process.env.DSH_REFLS_WORKSPACE;
const outFile = process.env.DSH_REFLS_OUT;
const TARGET = '228b7b82-84ed-49b7-a567-981c03b28c77'; // multi-turn
const CHILD = '33333333-3333-4333-8333-333333333333';  // "Reply with CHILD_OK"
const TIMEOUT_MS = 15000;

function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}

function check(cond, msg) {
  if (!cond) fail(msg);
}

function withTimeout(promise, what) {
  return Promise.race([
    promise,
    // unref: a pending deadline must not keep the process alive.
    new Promise((_, reject) => setTimeout(() => reject(new Error('timed out: ' + what)), TIMEOUT_MS).unref()),
  ]);
}

// The mention of a session as the server writes it (base64url of the
// JSON-quoted id, no padding).
function mention(label, id) {
  const payload = Buffer.from(JSON.stringify(id), 'utf8').toString('base64url');
  return `@[${label}](dsh-session:${payload})`;
}

// column of a JS string prefix in the negotiated encoding.
function column(prefix, encoding) {
  return encoding === 'utf-8' ? Buffer.byteLength(prefix, 'utf8') : prefix.length;
}

function start() {
  const proc = spawn(bin, ['--sessions-root', sessions, '--watch', 'off', '--log-level', 'debug'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  const diagnostics = [];
  const diagWaiters = [];
  conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
    diagnostics.push(p);
    for (const w of diagWaiters.splice(0)) w();
  });
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.listen();
  const waitDiagnostics = async (uri, version) => {
    for (;;) {
      const found = diagnostics.find((p) => p.uri === uri && p.version === version);
      if (found) return found;
      await withTimeout(new Promise((r) => diagWaiters.push(r)), 'diagnostics for ' + uri);
    }
  };
  return { proc, conn, exited, waitDiagnostics, stderr: () => stderr };
}

async function session(offerUtf8) {
  const { conn, exited, waitDiagnostics, stderr } = start();
  const init = await withTimeout(conn.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(workspace).href,
    capabilities: {
      general: offerUtf8 ? { positionEncodings: ['utf-8', 'utf-16'] } : undefined,
      textDocument: {
        completion: { completionItem: { insertReplaceSupport: true, labelDetailsSupport: true, documentationFormat: ['markdown'] } },
        hover: { contentFormat: ['markdown'] },
      },
    },
    // The store's subagent child is a hidden kind (docs/sessions.md):
    // shown here, as the completion below asks for it by its title.
    initializationOptions: { sessionId: TARGET, cwd: '/home/dev/alpha', showAutomationSessions: true },
  }), 'initialize');
  const enc = init.capabilities.positionEncoding;
  check(enc === (offerUtf8 ? 'utf-8' : 'utf-16'), `positionEncoding ${enc} when utf-8 offered=${offerUtf8}`);
  conn.sendNotification(InitializedNotification.type, {});

  // Wait until the index is built.
  for (let i = 0; ; i++) {
    const st = await conn.sendRequest('dsh/status', {});
    if (!st.building && st.sessionsIndexed > 0) break;
    check(i < 500, 'index never finished building');
    await new Promise((r) => setTimeout(r, 10));
  }

  // Completion on a line with an emoji and CJK before the "@".
  const uri = 'file:///client-test.md';
  const prefix = '😀 文件 ';
  const typed = '@CHILD_';
  const text = prefix + typed + '\n';
  conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'markdown', version: 1, text } });
  const pos = { line: 0, character: column(prefix + typed, enc) };
  const list = await withTimeout(conn.sendRequest(CompletionRequest.type, { textDocument: { uri }, position: pos }), 'completion');
  const item = list.items.find((it) => it.label === 'Reply with CHILD_OK');
  check(item, 'completion did not offer the subagent child: ' + JSON.stringify(list.items.map((i) => i.label)));
  check(item.textEdit.newText === mention('Reply with CHILD_OK', CHILD), 'newText ' + item.textEdit.newText);
  check(item.textEdit.replace.start.character === column(prefix, enc), `replace starts at ${item.textEdit.replace.start.character}, want ${column(prefix, enc)}`);
  check(item.textEdit.insert.end.character === pos.character, 'insert range does not end at the cursor');
  // eglot compares the symbol before point (CHILD_), VS Code the text from the @.
  check(item.filterText.startsWith('CHILD_ ' + typed), 'filterText ' + item.filterText);
  check(/^\d{5}$/.test(item.sortText), 'sortText ' + item.sortText);

  const resolved = await withTimeout(conn.sendRequest(CompletionResolveRequest.type, item), 'resolve');
  check(resolved.documentation && resolved.documentation.kind === 'markdown' && resolved.documentation.value.includes('messages kept'),
    'resolve documentation ' + JSON.stringify(resolved.documentation));

  // Hover on a mention after the emoji.
  const m = mention('child', CHILD);
  const huri = 'file:///hover.md';
  conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: huri, languageId: 'markdown', version: 1, text: prefix + m } });
  const hover = await withTimeout(conn.sendRequest(HoverRequest.type, { textDocument: { uri: huri }, position: { line: 0, character: column(prefix + '@[ch', enc) } }), 'hover');
  check(hover && hover.contents.value.includes('up to event') && hover.contents.value.includes(CHILD), 'hover ' + JSON.stringify(hover));
  check(hover.range.start.character === column(prefix, enc) && hover.range.end.character === column(prefix + m, enc), 'hover range ' + JSON.stringify(hover.range));

  // Diagnostics: a malformed mention and a self-reference.
  const duri = 'file:///diag.md';
  conn.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: duri, languageId: 'markdown', version: 1,
    text: 'bad @[x](dsh-session:%%%)\nself ' + mention('me', TARGET) } });
  const diags = await waitDiagnostics(duri, 1);
  const codes = diags.diagnostics.map((d) => d.code).sort();
  check(JSON.stringify(codes) === JSON.stringify(['SESSION_REFERENCE_INVALID_REFERENCE', 'SESSION_REFERENCE_SELF_REFERENCE']), 'diagnostic codes ' + JSON.stringify(codes));
  check(diags.diagnostics.every((d) => d.source === 'dsh-refls'), 'diagnostic source');

  // dsh/prepare, handed to the Go side for comparison with sessionref.
  const prepareText = 'compare ' + mention('packed', 'ff1c1e99-3bd4-4ef8-a954-80d607d628ba') + ' and ' + mention('child', CHILD);
  const prepared = await withTimeout(conn.sendRequest('dsh/prepare', { text: prepareText }), 'prepare');
  check(prepared.references.length === 2 && prepared.additionalContext, 'prepare result ' + JSON.stringify(prepared).slice(0, 200));

  // A cancelled request is answered with RequestCancelled (-32800). The
  // cancel races the work, so try a few times; every other answer must be
  // a real result.
  let cancelled = null;
  for (let i = 0; i < 20 && !cancelled; i++) {
    const source = new CancellationTokenSource();
    const p = conn.sendRequest('dsh/prepare', { text: prepareText }, source.token);
    source.cancel();
    try {
      const r = await withTimeout(p, 'cancelled prepare');
      check(r.references.length === 2, 'uncancelled prepare result');
    } catch (e) {
      check(e.code === -32800, 'cancelled request answered ' + e.code + ' ' + e.message);
      check(e.data && e.data.code === 'SESSION_REFERENCE_CANCELLED', 'cancel data ' + JSON.stringify(e.data));
      cancelled = e;
    }
  }
  check(cancelled, 'no request was ever cancelled');

  await withTimeout(conn.sendRequest(ShutdownRequest.type), 'shutdown');
  conn.sendNotification(ExitNotification.type);
  const code = await withTimeout(exited, 'exit');
  check(code === 0, 'exit code ' + code + '\n' + stderr());
  conn.dispose();
  return { prepareText, prepared };
}

try {
  const a = await session(true);
  await session(false);
  if (outFile) writeFileSync(outFile, JSON.stringify(a));
  console.log('ok');
} catch (e) {
  fail(e.stack || String(e));
}

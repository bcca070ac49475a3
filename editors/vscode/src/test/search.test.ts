import { strict as assert } from "node:assert";
import { describe, it } from "node:test";

import { ago, hitLocation, isSearchOff, LatestSearch, previewPath, searchItems, SearchState, sessionMention, sessionURI } from "../search";

describe("session URIs and mentions", () => {
  it("encodes ids as dsh does", () => {
    // Vectors of sessionref/uri_test.go, computed there with dsh's own rule.
    const vectors: [string, string][] = [
      ["228b7b82-84ed-49b7-a567-981c03b28c77", "dsh-session:IjIyOGI3YjgyLTg0ZWQtNDliNy1hNTY3LTk4MWMwM2IyOGM3NyI"],
      ['say "hi"', "dsh-session:InNheSBcImhpXCIi"],
      ["\b\f\x00\x01\x1f\x7f", "dsh-session:IlxiXGZcdTAwMDBcdTAwMDFcdTAwMWZ_Ig"],
      ["会话-标识", "dsh-session:IuS8muivnS3moIfor4Yi"],
      ["emoji 😀 𝄞", "dsh-session:ImVtb2ppIPCfmIAg8J2EniI"],
      ["\ufeff\u00a0", "dsh-session:Iu-7v8KgIg"],
    ];
    for (const [id, uri] of vectors) {
      assert.equal(sessionURI(id), uri, JSON.stringify(id));
    }
  });

  it("escapes ] and \\ in the label and falls back to the id", () => {
    assert.equal(sessionMention("a]b\\c", "a"), "@[a\\]b\\\\c](dsh-session:ImEi)");
    assert.equal(sessionMention("", "a"), "@[a](dsh-session:ImEi)");
  });

  it("names previews like the server's links", () => {
    assert.equal(previewPath("a", "Fix the parser"), "/session/ImEi/Fix the parser.md");
    assert.equal(previewPath("a", "a/b\\c\nd"), "/session/ImEi/a-b-c-d.md");
    assert.equal(previewPath("a", ""), "/session/ImEi/session.md");
  });
});

describe("search rows", () => {
  const now = Date.UTC(2026, 11, 1, 12);
  it("shows title, where and when, and the excerpt on one line, in the server's order", () => {
    const rows = searchItems(
      [
        {
          sessionId: "s1",
          label: "Fix flaky login test",
          displayTitle: "Fix flaky login test",
          cwd: "/work/demo",
          createdAt: now - 3 * 86400_000,
          matches: [
            { role: "user", seq: 28, excerpt: "Make that change\nand run the test twenty times.", ranges: [[36, 48]] },
            { role: "assistant", seq: 30, excerpt: "twenty", ranges: [[0, 6]] },
          ],
        },
        { sessionId: "s2", label: "s2", displayTitle: "", matches: [] },
      ],
      now,
    );
    assert.deepEqual(rows, [
      {
        label: "Fix flaky login test",
        description: "/work/demo · created 3 d ago",
        detail: "user: Make that change and run the test twenty times. (+1 more)",
        sessionId: "s1",
        title: "Fix flaky login test",
        seq: 28,
      },
      { label: "s2", description: "", detail: "", sessionId: "s2", title: "s2" },
    ]);
  });

  it("keeps long excerpts short", () => {
    const [row] = searchItems([{ sessionId: "s", displayTitle: "t", matches: [{ role: "user", excerpt: "x".repeat(1000) }] }], now);
    assert.equal(row.detail.length, 240);
    assert.ok(row.detail.endsWith("…"));
  });

  it("says how long ago in whole units", () => {
    assert.equal(ago(now - 10_000, now), "just now");
    assert.equal(ago(now - 5 * 60_000, now), "5 min ago");
    assert.equal(ago(now - 3 * 3600_000, now), "3 h ago");
    assert.equal(ago(now - 2 * 86400_000, now), "2 d ago");
    assert.equal(ago(Date.UTC(2026, 0, 2), now), "2026-01-02");
  });

  it("tells the switched-off search from other failures", () => {
    assert.equal(isSearchOff({ message: "off", code: -32010, data: { code: "SESSION_REFERENCE_INVALID_CONFIG" } }), true);
    assert.equal(isSearchOff({ message: "bad", code: -32602, data: { code: "SESSION_REFERENCE_INVALID_REFERENCE" } }), false);
    assert.equal(isSearchOff(new Error("gone")), false);
    assert.equal(isSearchOff(null), false);
  });
});

describe("LatestSearch", () => {
  /** A search whose answers the test releases one by one, in any order. */
  function controlled() {
    const pending = new Map<string, { resolve: (v: string[]) => void; reject: (e: unknown) => void; signal: AbortSignal }>();
    const search = (query: string, signal: AbortSignal) =>
      new Promise<string[]>((resolve, reject) => pending.set(query, { resolve, reject, signal }));
    return { pending, search };
  }

  it("aborts the previous query and shows only the latest answer", async () => {
    const { pending, search } = controlled();
    const shown: SearchState<string[]>[] = [];
    const s = new LatestSearch(search, (st) => shown.push(st));
    const first = s.update("twen");
    const second = s.update("twenty");
    assert.equal(pending.get("twen")!.signal.aborted, true);
    assert.equal(pending.get("twenty")!.signal.aborted, false);
    pending.get("twenty")!.resolve(["new"]);
    await second;
    pending.get("twen")!.resolve(["old"]);
    await first;
    assert.deepEqual(shown, [
      { kind: "busy", query: "twen" },
      { kind: "busy", query: "twenty" },
      { kind: "done", query: "twenty", results: ["new"] },
    ]);
  });

  it("shows failures, empties the list for a blank query and drops answers after dispose", async () => {
    const { pending, search } = controlled();
    const shown: SearchState<string[]>[] = [];
    const s = new LatestSearch(search, (st) => shown.push(st));
    const failed = s.update("x");
    pending.get("x")!.reject(new Error("boom"));
    await failed;
    assert.equal(shown.at(-1)!.kind, "failed");
    await s.update("  ");
    assert.deepEqual(shown.at(-1), { kind: "empty" });
    assert.equal(pending.size, 1, "a blank query asks nothing");
    const late = s.update("y");
    s.dispose();
    assert.equal(pending.get("y")!.signal.aborted, true);
    pending.get("y")!.resolve(["late"]);
    await late;
    assert.deepEqual(shown.at(-1), { kind: "busy", query: "y" });
  });
});

describe("a hit's location", () => {
  const sel = { start: { line: 12, character: 4 }, end: { line: 12, character: 16 } };
  it("opens the view the server names, selecting the hit", () => {
    const uri = "dsh-refls:/session/InMi/Weekly%20plan.md?seq=28";
    assert.deepEqual(hitLocation({ markdown: "x", uri, range: sel, selectionRange: sel }), { uri, selection: sel });
  });
  it("is undefined for an answer without a view, another scheme or a bad range", () => {
    assert.equal(hitLocation({ markdown: "x" }), undefined);
    assert.equal(hitLocation(null), undefined);
    assert.equal(hitLocation({ uri: "file:///etc/passwd", selectionRange: sel }), undefined);
    assert.equal(hitLocation({ uri: "dsh-refls:/session/InMi/a.md?seq=1", selectionRange: { start: { line: -1, character: 0 }, end: sel.end } }), undefined);
    assert.equal(hitLocation({ uri: "dsh-refls:/session/InMi/a.md?seq=1", selectionRange: { start: sel.start } }), undefined);
  });
});

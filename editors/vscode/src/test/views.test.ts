import { strict as assert } from "node:assert";
import { describe, it } from "node:test";

import { missingPaths, unappliedMachineSettings } from "../settings";
import { KEPT_PREPARED, KeptViews, preparedPaths, preparedViewUris, serverServesViews, STATUS_PATH, viewKind } from "../views";

describe("views", () => {
  it("asks the server for session previews and keeps every other view", () => {
    assert.equal(viewKind("dsh-refls", "/session/InMtYWxwaGEi/Fix the parser.md"), "session");
    assert.equal(viewKind("dsh-session", "InMtYWxwaGEi"), "session");
    assert.equal(viewKind("dsh-refls", STATUS_PATH), "kept");
    assert.equal(viewKind("dsh-refls", preparedPaths(3).message), "kept");
  });

  it("names prepared views per run, as Markdown files", () => {
    const a = preparedPaths(1);
    const b = preparedPaths(2);
    assert.notEqual(a.message, b.message);
    assert.notEqual(a.message, a.context);
    for (const p of [a.message, a.context, STATUS_PATH]) {
      assert.match(p, /^\/.+\.md$/);
    }
  });

  it("keeps the last prepared messages and says when a view is gone", () => {
    const kept = new KeptViews();
    for (let n = 1; n <= KEPT_PREPARED + 1; n++) {
      kept.addPrepared({ [preparedPaths(n).message]: `message ${n}` });
    }
    assert.match(kept.get(preparedPaths(1).message), /gone/);
    assert.equal(kept.get(preparedPaths(2).message), "message 2");
    assert.equal(kept.get(preparedPaths(KEPT_PREPARED + 1).message), `message ${KEPT_PREPARED + 1}`);
    kept.set(STATUS_PATH, "one");
    kept.set(STATUS_PATH, "two");
    assert.equal(kept.get(STATUS_PATH), "two");
  });

  it("leaves the views to a server that announces their scheme", () => {
    const announcing = (schemes: unknown) => ({ capabilities: { workspace: { textDocumentContent: { schemes } } } });
    assert.equal(serverServesViews(announcing(["dsh-refls"])), true);
    assert.equal(serverServesViews(announcing(["other", "dsh-refls"])), true);
    assert.equal(serverServesViews(announcing(["other"])), false);
    assert.equal(serverServesViews(announcing("dsh-refls")), false);
    assert.equal(serverServesViews({ capabilities: { workspace: {} } }), false);
    assert.equal(serverServesViews({ capabilities: {} }), false);
    assert.equal(serverServesViews(undefined), false);
  });

  it("reads the views a server names in its dsh/prepare answer", () => {
    const message = "dsh-refls:/prepared/4/Prepared%20message.md";
    const context = "dsh-refls:/prepared/4/Referenced%20sessions.md";
    assert.deepEqual(preparedViewUris({ content: "x", views: { message, context } }), { message, context });
    assert.deepEqual(preparedViewUris({ content: "x", views: { message } }), { message });
    assert.equal(preparedViewUris({ content: "x" }), undefined);
    assert.equal(preparedViewUris(null), undefined);
    assert.equal(preparedViewUris({ views: { context } }), undefined);
    assert.equal(preparedViewUris({ views: { message: "file:///tmp/m.md" } }), undefined);
    assert.equal(preparedViewUris({ views: { message, context: "untitled:ctx" } }), undefined);
  });
});

describe("settings that cannot apply", () => {
  it("reports a User value of a machine setting that a remote window does not use", () => {
    const problems = unappliedMachineSettings(
      [
        { key: "sessionsRoot", globalValue: "/home/me/.dsh/sessions", effective: "" },
        { key: "spillDir", globalValue: "/tmp/spill", effective: "/tmp/spill" },
        { key: "logFile", globalValue: "/tmp/a.log", workspaceValue: "/tmp/b.log", effective: "/tmp/b.log" },
        { key: "sessionId", globalValue: "abc", effective: "" },
      ],
      "ssh-remote",
    );
    assert.equal(problems.length, 1);
    assert.equal(problems[0].setting, "dsh.sessionsRoot");
    assert.match(problems[0].reason, /Remote settings/);
    assert.match(problems[0].reason, /ssh-remote/);
  });

  it("reports a sessions root that does not exist instead of using the default", () => {
    const exists = (p: string) => p === "/there";
    assert.deepEqual(missingPaths({ sessionsRoot: "/there" }, exists), []);
    assert.deepEqual(missingPaths({}, exists), []);
    const problems = missingPaths({ sessionsRoot: "/not/there" }, exists);
    assert.equal(problems.length, 1);
    assert.match(problems[0].reason, /\/not\/there, which does not exist/);
  });
});

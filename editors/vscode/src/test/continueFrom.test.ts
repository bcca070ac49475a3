import { strict as assert } from "node:assert";
import { describe, it } from "node:test";

import { CONTINUE_COMMAND, continueResult, continueSessionOf, sessionPicks } from "../continueFrom";
import { UnexpectedAnswerError } from "../present";

describe("continueResult", () => {
  it("takes the server's answer", () => {
    const r = continueResult({ text: "@[T](dsh-session:x)\n\n", sessionId: "x", title: "T" });
    assert.equal(r.text, "@[T](dsh-session:x)\n\n");
  });
  it("refuses anything else", () => {
    for (const bad of [null, "text", { text: 1, sessionId: "x", title: "T" }, { text: "t", title: "T" }]) {
      assert.throws(() => continueResult(bad), UnexpectedAnswerError);
    }
  });
});

describe("continueSessionOf", () => {
  it("finds the continue action among quick fixes", () => {
    const actions = [
      { title: "Replace with x", kind: "quickfix", edit: {} },
      { title: "Continue from A", command: { title: "Continue from A", command: CONTINUE_COMMAND, arguments: ["a"] } },
      { title: "Continue from B", command: { title: "Continue from B", command: CONTINUE_COMMAND, arguments: ["b"] } },
    ];
    assert.equal(continueSessionOf(actions), "a");
  });
  it("is undefined without one", () => {
    assert.equal(continueSessionOf(null), undefined);
    assert.equal(continueSessionOf([{ title: "Open recall preview", command: { command: "dsh-refls.openPreview", arguments: ["u"] } }]), undefined);
    assert.equal(continueSessionOf([{ command: { command: CONTINUE_COMMAND, arguments: [7] } }]), undefined);
  });
});

describe("sessionPicks", () => {
  it("rows in the server's order, titled, with the directory", () => {
    const picks = sessionPicks([
      { sessionId: "a", displayTitle: "Fix it", cwd: "/p", workingDirectory: "/q" },
      { sessionId: "b", displayTitle: "", cwd: "/p" },
      { displayTitle: "no id" },
    ]);
    assert.deepEqual(picks, [
      { label: "Fix it", description: "/q", detail: "a", sessionId: "a" },
      { label: "b", description: "/p", detail: "b", sessionId: "b" },
    ]);
  });
  it("refuses an answer that is not a list", () => {
    assert.throws(() => sessionPicks({}), UnexpectedAnswerError);
  });
});

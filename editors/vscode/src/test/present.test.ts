import { strict as assert } from "node:assert";
import { describe, it } from "node:test";

import {
  contentText,
  describeError,
  PreparedReference,
  presentForgotten,
  presentPrepared,
  presentStatus,
  UnexpectedAnswerError,
} from "../present";

const PROMPT = "## Referenced sessions\n\nwarning\n\n<referenced-sessions>\n[]\n</referenced-sessions>";

function contextWith(refs: PreparedReference[]) {
  return {
    source: { kind: "session-reference", form: "recall", version: 1, references: refs },
    content: [{ type: "text", text: PROMPT }],
    role: "user",
    id: "0b4f",
  };
}

describe("presentPrepared", () => {
  it("shows message and context for a prepared mention", () => {
    const got = presentPrepared({
      content: "Look at @Fix the build",
      references: [{ sessionId: "a", label: "Fix the build" }],
      additionalContext: contextWith([{ sessionId: "a", truncated: false, omittedBytes: 0, omittedMessages: 0 }]),
    });
    assert.equal(got.message, "Look at @Fix the build");
    assert.equal(got.context, PROMPT);
    assert.equal(got.summary, "Prepared with 1 session reference; nothing left out.");
  });

  it("sums what truncated snapshots left out", () => {
    const got = presentPrepared({
      content: [{ type: "text", text: "one" }, { type: "image" }, { type: "text", text: "two" }],
      additionalContext: contextWith([
        { sessionId: "a", truncated: true, omittedMessages: 3, omittedBytes: 1000 },
        { sessionId: "b", truncated: false, omittedMessages: 0, omittedBytes: 0 },
        { sessionId: "c", truncated: true, omittedMessages: 0, omittedBytes: 24 },
      ]),
    });
    assert.equal(got.message, "one\ntwo");
    assert.equal(got.summary, "Prepared with 3 session references; 2 snapshots shortened (3 messages and 1024 bytes left out).");
  });

  it("says when there is no context", () => {
    const got = presentPrepared({ content: "plain", references: [] });
    assert.equal(got.context, undefined);
    assert.match(got.summary, /unchanged/);
  });

  it("rejects answers that break the contract", () => {
    assert.throws(() => presentPrepared({ content: 3 }), UnexpectedAnswerError);
    assert.throws(() => presentPrepared({ content: "x", additionalContext: { content: [] } }), UnexpectedAnswerError);
    assert.throws(() => presentPrepared(null as never), UnexpectedAnswerError);
    assert.throws(() => contentText(null), /null/);
  });
});

describe("presentStatus", () => {
  it("lists scalar facts and renders nested ones as JSON", () => {
    const text = presentStatus({ sessionsIndexed: 7, watchMode: "fsnotify", lastUpdate: null, skipped: [{ path: "/x", reason: "bad header" }] });
    assert.match(text, /^# dsh-refls index status\n/);
    assert.match(text, /- \*\*sessionsIndexed\*\*: 7\n/);
    assert.match(text, /- \*\*watchMode\*\*: fsnotify\n/);
    assert.match(text, /- \*\*lastUpdate\*\*: none\n/);
    assert.match(text, /## skipped\n\n```json\n\[\n {2}\{\n {4}"path": "\/x",\n {4}"reason": "bad header"\n {2}\}\n\]\n```/);
  });

  it("falls back to JSON for a non-object answer", () => {
    assert.match(presentStatus([1, 2]), /```json\n\[\n {2}1,\n {2}2\n\]\n```/);
  });
});

describe("describeError", () => {
  it("names the dsh error code when the server sent one", () => {
    assert.equal(
      describeError({ code: -32001, message: "session abc is unreadable", data: { code: "SESSION_REFERENCE_READ_FAILED" } }),
      "session abc is unreadable (SESSION_REFERENCE_READ_FAILED)",
    );
    assert.equal(describeError({ code: -32800, message: "cancelled" }), "cancelled (JSON-RPC -32800)");
    assert.equal(describeError(new Error("boom")), "boom");
    assert.equal(describeError("plain"), "plain");
  });
});

describe("presentForgotten", () => {
  it("says how many were forgotten", () => {
    assert.match(presentForgotten({ forgotten: 3 }), /^Forgot the picks of 3 sessions and files/);
    assert.match(presentForgotten({ forgotten: 1 }), /^Forgot the picks of 1 session or file/);
    assert.equal(presentForgotten({ forgotten: 0 }), "There were no picks to forget in this workspace.");
  });

  it("refuses an answer of another shape", () => {
    for (const bad of [null, {}, { forgotten: "2" }, { forgotten: -1 }, { forgotten: 1.5 }]) {
      assert.throws(() => presentForgotten(bad), UnexpectedAnswerError, JSON.stringify(bad));
    }
  });
});

import { strict as assert } from "node:assert";
import * as path from "node:path";
import { describe, it } from "node:test";

import {
  didChangeConfigurationParams,
  expandPath,
  MachineSettingsKeeper,
  mapSettings,
  prepareMode,
  SERVER_OPTION_KINDS,
  serverArgs,
} from "../settings";

const ctx = { home: "/home/u", workspaceFolder: "/work/proj" };

describe("mapSettings", () => {
  it("covers every SPEC §4.1 option key", () => {
    assert.deepEqual(Object.keys(SERVER_OPTION_KINDS).sort(), [
      "candidateLimit",
      "candidateOrder",
      "contextWindow",
      "cwd",
      "directoryTokenBudget",
      "excludedDirectories",
      "fileMaxResults",
      "frecency",
      "maxReferenceBytes",
      "maxReferences",
      "recallSearch",
      "redactSecrets",
      "referenceContextFraction",
      "sessionId",
      "sessionScope",
      "sessionsRoot",
      "showAutomationSessions",
      "spillDir",
      "watch",
    ]);
  });

  it("maps every key with its type", () => {
    const got = mapSettings(
      {
        sessionsRoot: "~/.dsh/sessions",
        sessionId: " 228b7b82 ",
        cwd: "${workspaceFolder}",
        maxReferences: 2,
        maxReferenceBytes: 4096,
        referenceContextFraction: 0.25,
        contextWindow: 128000,
        candidateLimit: 10,
        fileMaxResults: 5,
        directoryTokenBudget: 0,
        excludedDirectories: ["node_modules", " dist ", ""],
        spillDir: "${workspaceFolder}/.spill",
        watch: "poll",
        candidateOrder: "created",
        recallSearch: false,
        redactSecrets: true,
        frecency: false,
        sessionScope: " recent ",
        showAutomationSessions: true,
        serverPath: "/ignored/here",
        prepareMode: "preserve",
      },
      ctx,
    );
    assert.deepEqual(got.problems, []);
    assert.deepEqual(got.options, {
      sessionsRoot: path.join("/home/u", ".dsh/sessions"),
      sessionId: "228b7b82",
      cwd: "/work/proj",
      maxReferences: 2,
      maxReferenceBytes: 4096,
      referenceContextFraction: 0.25,
      contextWindow: 128000,
      candidateLimit: 10,
      fileMaxResults: 5,
      directoryTokenBudget: 0,
      excludedDirectories: ["node_modules", "dist"],
      spillDir: "/work/proj/.spill",
      watch: "poll",
      candidateOrder: "created",
      recallSearch: false,
      redactSecrets: true,
      frecency: false,
      sessionScope: "recent",
      showAutomationSessions: true,
    });
  });

  it("leaves unset values out so the server keeps its defaults", () => {
    const got = mapSettings({
      sessionsRoot: "",
      sessionId: "   ",
      maxReferences: null,
      maxReferenceBytes: undefined,
      excludedDirectories: [],
      watch: "",
      candidateOrder: "",
      recallSearch: null,
    });
    assert.deepEqual(got, { options: {}, problems: [] });
  });

  it("reports values of the wrong type and leaves them out", () => {
    const cases: [string, unknown, RegExp][] = [
      ["maxReferenceBytes", "4096", /number/],
      ["maxReferences", 1.5, /whole/],
      ["directoryTokenBudget", "100k", /number/],
      ["contextWindow", Number.NaN, /number/],
      ["referenceContextFraction", true, /number/],
      ["sessionsRoot", 42, /string/],
      ["excludedDirectories", ["ok", 3], /list of strings/],
      ["watch", "inotify", /auto, fsnotify, poll, off/],
      ["candidateOrder", "newest", /active, created/],
      ["recallSearch", "yes", /true or false/],
      ["redactSecrets", 1, /true or false/],
      ["frecency", "off", /true or false/],
      ["sessionScope", "here", /all, workspace, recent/],
      ["showAutomationSessions", "yes", /true or false/],
    ];
    for (const [key, value, reason] of cases) {
      const got = mapSettings({ [key]: value });
      assert.deepEqual(got.options, {}, key);
      assert.equal(got.problems.length, 1, key);
      assert.equal(got.problems[0].setting, `dsh.${key}`);
      assert.match(got.problems[0].reason, reason, key);
    }
  });

  it("passes range errors through for the server to report", () => {
    assert.deepEqual(mapSettings({ maxReferences: 9, maxReferenceBytes: -1 }).options, { maxReferences: 9, maxReferenceBytes: -1 });
  });
});

describe("expandPath", () => {
  it("expands ~ only at the start and ${workspaceFolder} anywhere", () => {
    assert.equal(expandPath("~", ctx), "/home/u");
    assert.equal(expandPath("~/x", ctx), path.join("/home/u", "x"));
    assert.equal(expandPath("/a/~/b", ctx), "/a/~/b");
    assert.equal(expandPath("~other/x", ctx), "~other/x");
    assert.equal(expandPath("${workspaceFolder}/a:${workspaceFolder}", ctx), "/work/proj/a:/work/proj");
    assert.equal(expandPath("${workspaceFolder}/a", { home: "/h" }), "${workspaceFolder}/a");
  });
});

describe("serverArgs and prepareMode", () => {
  it("builds flags only from valid process settings", () => {
    assert.deepEqual(serverArgs({ logLevel: "debug", logFile: "~/dsh.log" }, ctx), ["--log-level", "debug", "--log-file", path.join("/home/u", "dsh.log")]);
    assert.deepEqual(serverArgs({ logLevel: "loud", logFile: " " }, ctx), []);
  });

  it("defaults the prepare mode to replace", () => {
    assert.equal(prepareMode({ prepareMode: "preserve" }), "preserve");
    assert.equal(prepareMode({ prepareMode: "other" }), "replace");
    assert.equal(prepareMode({}), "replace");
  });

  it("wraps options under dsh for didChangeConfiguration", () => {
    assert.deepEqual(didChangeConfigurationParams({ watch: "off" }), { settings: { dsh: { watch: "off" } } });
  });
});

describe("MachineSettingsKeeper", () => {
  const root = "/home/me/.dsh/sessions";
  const none = () => false;

  it("keeps a machine setting VS Code stops delivering, and says so", () => {
    const keeper = new MachineSettingsKeeper();
    // At start a remote window delivers the User value.
    const start = keeper.keep({ sessionsRoot: root, logFile: "", candidateLimit: null });
    assert.deepEqual(start.problems, []);
    assert.equal(start.raw["sessionsRoot"], root);
    // Another setting changes; the value is gone, with no change event for it.
    const changed = keeper.keep({ sessionsRoot: "", candidateLimit: 30 }, (key) => key === "candidateLimit", "ssh-remote");
    assert.deepEqual(changed.raw, { sessionsRoot: root, candidateLimit: 30 });
    assert.equal(changed.problems.length, 1);
    assert.equal(changed.problems[0].setting, "dsh.sessionsRoot");
    assert.match(changed.problems[0].reason, /stopped delivering it to this ssh-remote window/);
    assert.match(changed.problems[0].reason, /Remote settings .*workspace settings/);
    assert.ok(changed.problems[0].reason.includes(JSON.stringify(root)));
    // A restart later (no change event) still starts with it.
    assert.equal(keeper.keep({ sessionsRoot: undefined }, none).raw["sessionsRoot"], root);
    // The map given is not changed.
    const raw = { sessionsRoot: "" };
    keeper.keep(raw);
    assert.deepEqual(raw, { sessionsRoot: "" });
  });

  it("takes a change or a clearing of the setting itself as it is", () => {
    const keeper = new MachineSettingsKeeper();
    keeper.keep({ sessionsRoot: root, spillDir: "/tmp/spill" });
    const moved = keeper.keep({ sessionsRoot: "/elsewhere", spillDir: "/tmp/spill" }, (key) => key === "sessionsRoot");
    assert.deepEqual(moved, { raw: { sessionsRoot: "/elsewhere", spillDir: "/tmp/spill" }, problems: [] });
    const cleared = keeper.keep({ sessionsRoot: "  ", spillDir: "/tmp/spill" }, (key) => key === "sessionsRoot");
    assert.deepEqual(cleared, { raw: { sessionsRoot: "  ", spillDir: "/tmp/spill" }, problems: [] });
    // Cleared stays cleared: nothing is put back later either.
    assert.deepEqual(keeper.keep({ sessionsRoot: "", spillDir: "/tmp/spill" }, none).problems, []);
  });

  it("keeps only machine settings, and nothing never delivered", () => {
    const keeper = new MachineSettingsKeeper();
    assert.deepEqual(keeper.keep({ sessionsRoot: "" }).problems, []);
    keeper.keep({ sessionId: "abc", serverPath: "/opt/dsh-refls", logFile: "/tmp/dsh.log" });
    const later = keeper.keep({ sessionId: "", serverPath: "", logFile: "" }, none);
    assert.deepEqual(later.raw, { sessionId: "", serverPath: "/opt/dsh-refls", logFile: "/tmp/dsh.log" });
    assert.deepEqual(later.problems.map((p) => p.setting), ["dsh.serverPath", "dsh.logFile"]);
  });
});

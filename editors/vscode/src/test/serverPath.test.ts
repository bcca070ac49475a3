import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";

import { binaryNames, findServer, isExecutableFile, ServerNotFoundError } from "../serverPath";

/** Writes an executable (or plain) file and returns its path. */
function writeFile(p: string, executable: boolean): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, "#!/bin/sh\nexit 0\n");
  fs.chmodSync(p, executable ? 0o755 : 0o644);
  return p;
}

describe("findServer on real files", { skip: process.platform === "win32" ? "POSIX permissions" : false }, () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "dsh-refls-find-"));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const base = () => ({ platform: "linux" as NodeJS.Platform, arch: "x64", extensionDir: path.join(dir, "ext"), home: path.join(dir, "home") });

  it("prefers the setting over PATH and the bundled binary", () => {
    const configured = writeFile(path.join(dir, "custom", "dsh-refls"), true);
    writeFile(path.join(dir, "onpath", "dsh-refls"), true);
    writeFile(path.join(dir, "ext", "bin", "dsh-refls"), true);
    const got = findServer({ ...base(), configured, envPath: path.join(dir, "onpath") });
    assert.deepEqual(got, { path: configured, source: "setting" });
  });

  it("expands ~ and ${workspaceFolder} in the setting", () => {
    const inHome = writeFile(path.join(dir, "home", "bin", "dsh-refls"), true);
    assert.equal(findServer({ ...base(), configured: "~/bin/dsh-refls" }).path, inHome);
    const inWs = writeFile(path.join(dir, "ws", "tools", "dsh-refls"), true);
    const ws = path.join(dir, "ws");
    assert.equal(findServer({ ...base(), workspaceFolder: ws, configured: "${workspaceFolder}/tools/dsh-refls" }).path, inWs);
    assert.equal(findServer({ ...base(), workspaceFolder: ws, configured: "tools/dsh-refls" }).path, inWs);
  });

  it("fails on a wrong setting instead of running another binary", () => {
    writeFile(path.join(dir, "onpath", "dsh-refls"), true);
    const notExec = writeFile(path.join(dir, "custom", "dsh-refls"), false);
    for (const configured of [notExec, path.join(dir, "missing"), dir]) {
      assert.throws(
        () => findServer({ ...base(), configured, envPath: path.join(dir, "onpath") }),
        (err: unknown) => err instanceof ServerNotFoundError && err.message.includes("dsh.serverPath") && err.tried.length >= 1,
      );
    }
  });

  it("takes the first executable on PATH, skipping empty entries and non-executables", () => {
    writeFile(path.join(dir, "a", "dsh-refls"), false);
    const second = writeFile(path.join(dir, "b", "dsh-refls"), true);
    writeFile(path.join(dir, "c", "dsh-refls"), true);
    const envPath = ["", path.join(dir, "a"), path.join(dir, "b"), path.join(dir, "c")].join(":");
    assert.deepEqual(findServer({ ...base(), envPath, configured: "  " }), { path: second, source: "PATH" });
  });

  it("falls back to the platform-specific, then the plain bundled binary", () => {
    const plain = writeFile(path.join(dir, "ext", "bin", "dsh-refls"), true);
    assert.deepEqual(findServer({ ...base(), envPath: path.join(dir, "empty") }), { path: plain, source: "bundled" });
    const specific = writeFile(path.join(dir, "ext", "bin", "linux-x64", "dsh-refls"), true);
    assert.deepEqual(findServer({ ...base(), envPath: "" }), { path: specific, source: "bundled" });
  });

  it("lists every place tried when nothing is found", () => {
    const envPath = [path.join(dir, "x"), path.join(dir, "y")].join(":");
    try {
      findServer({ ...base(), envPath });
      assert.fail("expected ServerNotFoundError");
    } catch (err) {
      assert.ok(err instanceof ServerNotFoundError);
      assert.deepEqual(err.tried, [
        path.join(dir, "x", "dsh-refls"),
        path.join(dir, "y", "dsh-refls"),
        path.join(dir, "ext", "bin", "linux-x64", "dsh-refls"),
        path.join(dir, "ext", "bin", "dsh-refls"),
      ]);
      assert.match(err.message, /not found/);
    }
  });

  it("isExecutableFile rejects directories and plain files", () => {
    assert.equal(isExecutableFile(dir), false);
    assert.equal(isExecutableFile(writeFile(path.join(dir, "plain"), false)), false);
    assert.equal(isExecutableFile(writeFile(path.join(dir, "exec"), true)), true);
    assert.equal(isExecutableFile(path.join(dir, "absent")), false);
  });
});

describe("findServer on Windows paths", () => {
  it("splits PATH on ';' and tries .exe names", () => {
    const existing = new Set(["C:\\tools\\dsh-refls.exe"]);
    const got = findServer({
      platform: "win32",
      arch: "x64",
      extensionDir: "C:\\ext",
      envPath: "C:\\empty;C:\\tools",
      envPathExt: ".COM;.EXE",
      isExecutable: (p) => existing.has(p),
    });
    assert.deepEqual(got, { path: "C:\\tools\\dsh-refls.exe", source: "PATH" });
  });

  it("adds .exe to a setting without an extension", () => {
    const got = findServer({
      platform: "win32",
      arch: "arm64",
      extensionDir: "C:\\ext",
      configured: "D:\\bin\\dsh-refls",
      isExecutable: (p) => p === "D:\\bin\\dsh-refls.exe",
    });
    assert.deepEqual(got, { path: "D:\\bin\\dsh-refls.exe", source: "setting" });
  });

  it("binaryNames follows PATHEXT without duplicates", () => {
    assert.deepEqual(binaryNames("win32", ".EXE;.CMD"), ["dsh-refls.exe", "dsh-refls.cmd"]);
    assert.deepEqual(binaryNames("darwin"), ["dsh-refls"]);
  });
});

// Finding the dsh-refls binary. This module does not import vscode so that
// it can be tested with Node's own test runner.

import * as fs from "fs";
import * as path from "path";

import { expandPath } from "./settings";

/** Base name of the server binary, without a platform suffix. */
export const SERVER_BINARY = "dsh-refls";

/** Where a server binary was found. */
export type ServerSource = "setting" | "PATH" | "bundled";

/** A server binary that exists and may be executed. */
export interface ServerLocation {
  /** Absolute path of the binary. */
  path: string;
  /** Which rule found it. */
  source: ServerSource;
}

/** What findServer needs to know; every field is injectable for tests. */
export interface FindServerOptions {
  /** The `dsh.serverPath` setting; blank means "not set". */
  configured?: string;
  /** The PATH environment variable. */
  envPath?: string;
  /** The PATHEXT environment variable (Windows only). */
  envPathExt?: string;
  /** process.platform of the host. */
  platform: NodeJS.Platform;
  /** process.arch of the host. */
  arch: string;
  /** Root directory of the installed extension (holds `bin/`). */
  extensionDir: string;
  /** First workspace folder, used to expand `${workspaceFolder}` and relative settings. */
  workspaceFolder?: string;
  /** Home directory, used to expand `~`. */
  home?: string;
  /** Reports whether a path is an executable regular file. */
  isExecutable?: (p: string) => boolean;
}

/** Raised when no usable binary exists; its message lists every place tried. */
export class ServerNotFoundError extends Error {
  /** Every path that was tried, in order. */
  readonly tried: string[];

  constructor(message: string, tried: string[]) {
    super(message);
    this.name = "ServerNotFoundError";
    this.tried = tried;
  }
}

/** Reports whether p is a regular file the current user may execute. */
export function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) {
      return false;
    }
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** File names the binary may have on a platform, most likely first. */
export function binaryNames(platform: NodeJS.Platform, envPathExt?: string): string[] {
  if (platform !== "win32") {
    return [SERVER_BINARY];
  }
  const exts = (envPathExt || ".EXE;.CMD;.BAT")
    .split(";")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "");
  const names = [SERVER_BINARY + ".exe"];
  for (const ext of exts) {
    const name = SERVER_BINARY + ext;
    if (!names.includes(name)) {
      names.push(name);
    }
  }
  return names;
}

/**
 * Finds the server binary: the `dsh.serverPath` setting when it is set (and
 * then only there: a wrong setting is an error, not a reason to run some other
 * binary), else the first match on PATH, else the binary bundled in the
 * extension under `bin/<platform>-<arch>/` or `bin/`.
 */
export function findServer(opts: FindServerOptions): ServerLocation {
  const isExec = opts.isExecutable ?? isExecutableFile;
  const pathMod = opts.platform === "win32" ? path.win32 : path.posix;
  const names = binaryNames(opts.platform, opts.envPathExt);
  const tried: string[] = [];

  const configured = (opts.configured ?? "").trim();
  if (configured !== "") {
    let p = expandPath(configured, { home: opts.home, workspaceFolder: opts.workspaceFolder });
    if (!pathMod.isAbsolute(p)) {
      p = pathMod.resolve(opts.workspaceFolder ?? opts.extensionDir, p);
    }
    const candidates = [p];
    if (opts.platform === "win32" && !/\.[A-Za-z0-9]+$/.test(p)) {
      candidates.push(p + ".exe");
    }
    for (const c of candidates) {
      tried.push(c);
      if (isExec(c)) {
        return { path: c, source: "setting" };
      }
    }
    throw new ServerNotFoundError(
      `dsh.serverPath is set to ${JSON.stringify(configured)}, but ${p} is not an executable file`,
      tried,
    );
  }

  const sep = opts.platform === "win32" ? ";" : ":";
  for (const dir of (opts.envPath ?? "").split(sep)) {
    if (dir === "") {
      continue;
    }
    for (const name of names) {
      const c = pathMod.join(dir, name);
      tried.push(c);
      if (isExec(c)) {
        return { path: c, source: "PATH" };
      }
    }
  }

  const binDir = pathMod.join(opts.extensionDir, "bin");
  for (const dir of [pathMod.join(binDir, `${opts.platform}-${opts.arch}`), binDir]) {
    for (const name of names) {
      const c = pathMod.join(dir, name);
      tried.push(c);
      if (isExec(c)) {
        return { path: c, source: "bundled" };
      }
    }
  }

  throw new ServerNotFoundError(
    `${SERVER_BINARY} was not found: set dsh.serverPath, put ${SERVER_BINARY} on PATH, ` +
      `or install an extension build that bundles it (looked in PATH and ${binDir})`,
    tried,
  );
}

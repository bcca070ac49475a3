// Mapping the extension's `dsh.*` settings to the server options of SPEC §4.1.
// This module does not import vscode so that it can be tested with Node's own
// test runner; extension.ts reads the settings and hands them over as a plain
// object.

import * as os from "os";
import * as path from "path";

/** The configuration section every setting lives under, and the key the server reads. */
export const SECTION = "dsh";

/** Values the server accepts for `watch`. */
export const WATCH_MODES = ["auto", "fsnotify", "poll", "off"] as const;

/** Values the server accepts for `candidateOrder`. */
export const CANDIDATE_ORDERS = ["active", "created"] as const;

/** Values the server accepts for `sessionScope`. */
export const SESSION_SCOPES = ["all", "workspace", "recent"] as const;

/** Values the server accepts for the `mode` of dsh/prepare. */
export const PREPARE_MODES = ["replace", "preserve"] as const;

/** A prepare mode of dsh/prepare. */
export type PrepareMode = (typeof PREPARE_MODES)[number];

/** Server options of SPEC §4.1, sent as initializationOptions and under `dsh` in didChangeConfiguration. */
export interface ServerOptions {
  sessionsRoot?: string;
  sessionId?: string;
  cwd?: string;
  maxReferences?: number;
  maxReferenceBytes?: number;
  referenceContextFraction?: number;
  contextWindow?: number;
  candidateLimit?: number;
  fileMaxResults?: number;
  directoryTokenBudget?: number;
  excludedDirectories?: string[];
  spillDir?: string;
  watch?: (typeof WATCH_MODES)[number];
  candidateOrder?: (typeof CANDIDATE_ORDERS)[number];
  recallSearch?: boolean;
  redactSecrets?: boolean;
  frecency?: boolean;
  sessionScope?: (typeof SESSION_SCOPES)[number];
  showAutomationSessions?: boolean;
}

/** How a §4.1 key is read from a setting. */
type Kind = "path" | "string" | "integer" | "number" | "boolean" | "stringList" | "watch" | "candidateOrder" | "sessionScope";

/** The values a setting of an enumerated kind may take. */
const ENUMS: Partial<Record<Kind, readonly string[]>> = {
  watch: WATCH_MODES,
  candidateOrder: CANDIDATE_ORDERS,
  sessionScope: SESSION_SCOPES,
};

/**
 * Every §4.1 key and how its `dsh.<key>` setting is read. Paths get `~` and
 * `${workspaceFolder}` expanded; everything else is passed through once its
 * type is right.
 */
export const SERVER_OPTION_KINDS: Readonly<Record<keyof ServerOptions, Kind>> = {
  sessionsRoot: "path",
  sessionId: "string",
  cwd: "path",
  maxReferences: "integer",
  maxReferenceBytes: "integer",
  referenceContextFraction: "number",
  contextWindow: "integer",
  candidateLimit: "integer",
  fileMaxResults: "integer",
  directoryTokenBudget: "integer",
  excludedDirectories: "stringList",
  spillDir: "path",
  watch: "watch",
  candidateOrder: "candidateOrder",
  recallSearch: "boolean",
  redactSecrets: "boolean",
  frecency: "boolean",
  sessionScope: "sessionScope",
  showAutomationSessions: "boolean",
};

/** Values used to expand `~` and `${workspaceFolder}` in path settings. */
export interface ExpandContext {
  home?: string;
  workspaceFolder?: string;
}

/**
 * Expands a leading `~` (the home directory) and every `${workspaceFolder}`
 * in a path setting. A `${workspaceFolder}` without an open folder is left as
 * written so that the server reports the odd path instead of a silently wrong one.
 */
export function expandPath(value: string, ctx: ExpandContext = {}): string {
  let out = value;
  if (ctx.workspaceFolder !== undefined) {
    out = out.split("${workspaceFolder}").join(ctx.workspaceFolder);
  }
  const home = ctx.home ?? os.homedir();
  if (out === "~") {
    return home;
  }
  if (out.startsWith("~/") || out.startsWith("~\\")) {
    return path.join(home, out.slice(2));
  }
  return out;
}

/** A setting that cannot be sent to the server as it is. */
export interface SettingProblem {
  /** The full setting name, e.g. `dsh.maxReferenceBytes`. */
  setting: string;
  /** Why it was left out. */
  reason: string;
}

/** Result of mapping settings: the options to send and what was left out. */
export interface MappedSettings {
  options: ServerOptions;
  problems: SettingProblem[];
}

/**
 * Maps raw `dsh.*` setting values (as `vscode.workspace.getConfiguration("dsh").get(key)`
 * returns them) to server options. Unset values — `undefined`, `null`, blank
 * strings, empty lists — are left out so that the server applies its own
 * defaults. Values of the wrong type are left out and reported; range checks
 * are the server's job (it answers INVALID_CONFIG with a precise message).
 */
export function mapSettings(raw: Record<string, unknown>, ctx: ExpandContext = {}): MappedSettings {
  const options: Record<string, unknown> = {};
  const problems: SettingProblem[] = [];
  for (const [key, kind] of Object.entries(SERVER_OPTION_KINDS) as [keyof ServerOptions, Kind][]) {
    const value = raw[key];
    if (value === undefined || value === null) {
      continue;
    }
    const setting = `${SECTION}.${key}`;
    switch (kind) {
      case "path":
      case "string":
      case "watch":
      case "candidateOrder":
      case "sessionScope": {
        if (typeof value !== "string") {
          problems.push({ setting, reason: "must be a string" });
          continue;
        }
        const trimmed = value.trim();
        if (trimmed === "") {
          continue;
        }
        const allowed = ENUMS[kind];
        if (allowed && !allowed.includes(trimmed)) {
          problems.push({ setting, reason: `must be one of ${allowed.join(", ")}` });
          continue;
        }
        options[key] = kind === "path" ? expandPath(trimmed, ctx) : trimmed;
        break;
      }
      case "integer":
      case "number": {
        if (typeof value !== "number" || !Number.isFinite(value)) {
          problems.push({ setting, reason: "must be a number" });
          continue;
        }
        if (kind === "integer" && !Number.isInteger(value)) {
          problems.push({ setting, reason: "must be a whole number" });
          continue;
        }
        options[key] = value;
        break;
      }
      case "boolean": {
        if (typeof value !== "boolean") {
          problems.push({ setting, reason: "must be true or false" });
          continue;
        }
        options[key] = value;
        break;
      }
      case "stringList": {
        if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
          problems.push({ setting, reason: "must be a list of strings" });
          continue;
        }
        const list = value.map((v: string) => v.trim()).filter((v) => v !== "");
        if (list.length > 0) {
          options[key] = list;
        }
        break;
      }
    }
  }
  return { options: options as ServerOptions, problems };
}

/** Settings that change how the server process is started; a change needs a restart. */
export const RESTART_SETTINGS = ["serverPath", "logLevel", "logFile"] as const;

/** Log levels accepted by `--log-level`. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/** Command-line arguments for the server from the process settings. */
export function serverArgs(raw: Record<string, unknown>, ctx: ExpandContext = {}): string[] {
  const args: string[] = [];
  const level = raw["logLevel"];
  if (typeof level === "string" && (LOG_LEVELS as readonly string[]).includes(level)) {
    args.push("--log-level", level);
  }
  const logFile = raw["logFile"];
  if (typeof logFile === "string" && logFile.trim() !== "") {
    args.push("--log-file", expandPath(logFile.trim(), ctx));
  }
  return args;
}

/** The payload of workspace/didChangeConfiguration: every set option under `dsh` (the server replaces its options with it, so an option left out returns to its default). */
export function didChangeConfigurationParams(options: ServerOptions): { settings: { dsh: ServerOptions } } {
  return { settings: { [SECTION]: options } as { dsh: ServerOptions } };
}

/** Reads `dsh.prepareMode`, falling back to `replace` for anything else. */
export function prepareMode(raw: Record<string, unknown>): PrepareMode {
  const mode = raw["prepareMode"];
  return typeof mode === "string" && (PREPARE_MODES as readonly string[]).includes(mode)
    ? (mode as PrepareMode)
    : "replace";
}

/** Settings of machine scope: they name paths on the machine the server runs on. */
export const MACHINE_SETTINGS = ["serverPath", "logFile", "sessionsRoot", "spillDir"] as const;

/** The text a machine setting's warning ends with: where to set it so that VS Code delivers it. */
const MACHINE_SETTING_HOME =
  `it is a machine setting, read from the Remote settings of the machine the server runs on ` +
  `("Preferences: Open Remote Settings") or from the workspace settings`;

/** What `WorkspaceConfiguration.inspect(key)` says of one setting, plus the value in effect. */
export interface SettingInspection {
  key: string;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
  effective: unknown;
}

/**
 * Finds machine settings that are set in User settings but not in effect:
 * in a remote window (code-server, Remote-SSH, WSL, containers) VS Code
 * reads machine-scoped settings from the Remote settings of that machine
 * and ignores the local User value. They are reported, not silently replaced.
 */
export function unappliedMachineSettings(inspections: SettingInspection[], remoteName?: string): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const i of inspections) {
    if (!(MACHINE_SETTINGS as readonly string[]).includes(i.key) || i.globalValue === undefined) {
      continue;
    }
    if (i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined) {
      continue;
    }
    if (JSON.stringify(i.globalValue) === JSON.stringify(i.effective)) {
      continue;
    }
    const where = remoteName ? `this ${remoteName} window` : "this window";
    problems.push({
      setting: `${SECTION}.${i.key}`,
      reason:
        `is set to ${JSON.stringify(i.globalValue)} in User settings, but ${where} uses ${JSON.stringify(i.effective)}: ` +
        MACHINE_SETTING_HOME,
    });
  }
  return problems;
}

/**
 * Finds path options that cannot be applied because the path does not
 * exist on the machine the server runs on (today: the sessions root).
 */
export function missingPaths(options: ServerOptions, exists: (p: string) => boolean): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (options.sessionsRoot !== undefined && !exists(options.sessionsRoot)) {
    problems.push({
      setting: `${SECTION}.sessionsRoot`,
      reason: `names ${options.sessionsRoot}, which does not exist: no sessions are offered until it does`,
    });
  }
  return problems;
}

/**
 * Keeps the machine settings VS Code stops delivering. A remote window
 * (code-server, Remote-SSH, WSL, containers) may hand the extension a User
 * value of a machine setting at start and then, on the first change of any
 * other setting, a configuration without it, with no change event for that
 * setting and no User value left in `inspect`: the server would silently
 * fall back to the default (for `dsh.sessionsRoot`, `~/.dsh/sessions`). A
 * value that vanishes that way is kept as last delivered, and reported;
 * a value the user changes or clears (a change event for that setting) is
 * taken as it is.
 */
export class MachineSettingsKeeper {
  private readonly delivered = new Map<string, string>();

  /**
   * Returns raw with every vanished machine setting put back, and a problem
   * for each. changed(key) says whether the configuration change being
   * handled touches `dsh.<key>`; without a change (a start, a restart, a
   * request of the server) nothing did.
   */
  keep(
    raw: Record<string, unknown>,
    changed: (key: string) => boolean = () => false,
    remoteName?: string,
  ): { raw: Record<string, unknown>; problems: SettingProblem[] } {
    const out = { ...raw };
    const problems: SettingProblem[] = [];
    for (const key of MACHINE_SETTINGS) {
      const value = raw[key];
      if (typeof value === "string" && value.trim() !== "") {
        this.delivered.set(key, value);
        continue;
      }
      const last = this.delivered.get(key);
      if (last === undefined) {
        continue;
      }
      if (changed(key)) {
        this.delivered.delete(key);
        continue;
      }
      out[key] = last;
      const where = remoteName ? `this ${remoteName} window` : "this window";
      problems.push({
        setting: `${SECTION}.${key}`,
        reason:
          `was ${JSON.stringify(last)}, but VS Code stopped delivering it to ${where} when another setting changed, ` +
          `so the server keeps that value; ${MACHINE_SETTING_HOME}: set it there`,
      });
    }
    return { raw: out, problems };
  }
}

// "DSH: Search Sessions": the answer of dsh/search turned into picker items,
// the mention and preview of a chosen session, and the rule that only the
// answer to the latest query is shown. This module does not import vscode
// so that it can be tested with Node's own test runner; extension.ts drives
// the QuickPick.

/** One hit inside a session, as dsh/search reports it (issue 13). */
export interface SearchMatch {
  role?: string;
  seq?: number;
  excerpt?: string;
  /** Hits inside the excerpt, [start, end) in UTF-16 code units. */
  ranges?: [number, number][];
}

/** One session of a dsh/search answer. */
export interface SearchResult {
  sessionId: string;
  label?: string;
  displayTitle?: string;
  cwd?: string;
  createdAt?: number;
  matches?: SearchMatch[];
}

/** What one row of the picker shows, and the session it stands for. */
export interface SearchItem {
  label: string;
  description: string;
  detail: string;
  sessionId: string;
  title: string;
  /** The seq of the row's first match: the message its preview opens at. */
  seq?: number;
}

/** Prefix of session URIs (SPEC §2.1). */
const SESSION_URI_PREFIX = "dsh-session:";

/** The payload of the session URI of an id: base64url (no padding) of the id's JSON string, UTF-8. */
export function sessionPayload(id: string): string {
  return Buffer.from(JSON.stringify(id), "utf8").toString("base64url");
}

/** The session URI of an id (SPEC §2.1). */
export function sessionURI(id: string): string {
  return SESSION_URI_PREFIX + sessionPayload(id);
}

/** The mention of a session, `@[title](dsh-session:…)`, with `\` and `]` in the title escaped. */
export function sessionMention(title: string, id: string): string {
  const label = (title === "" ? id : title).replace(/[\\\]]/g, (c) => "\\" + c);
  return `@[${label}](${sessionURI(id)})`;
}

/**
 * Path of the session's recall preview under the dsh-refls: scheme, the
 * shape the server's go to definition and document links use:
 * `/session/<payload>/<title>.md`, the title with `/`, `\` and control
 * characters as `-`.
 */
export function previewPath(id: string, title: string): string {
  let name = "";
  for (const ch of title) {
    const c = ch.codePointAt(0) ?? 0;
    name += ch === "/" || ch === "\\" || c < 0x20 || c === 0x7f ? "-" : ch;
  }
  return `/session/${sessionPayload(id)}/${name === "" ? "session" : name}.md`;
}

/** How long ago a time was, in the largest whole unit: "just now", "5 min ago", "3 h ago", "2 d ago", or the date. */
export function ago(ms: number, now: number): string {
  const s = Math.floor((now - ms) / 1000);
  if (s < 60) {
    return "just now";
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)} min ago`;
  }
  if (s < 86400) {
    return `${Math.floor(s / 3600)} h ago`;
  }
  if (s < 30 * 86400) {
    return `${Math.floor(s / 86400)} d ago`;
  }
  return new Date(ms).toISOString().slice(0, 10);
}

/** Longest excerpt a row shows, in characters; the server's window is short already. */
const MAX_DETAIL = 240;

/** One line of an excerpt: line breaks and tabs as spaces, runs of spaces kept short. */
function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, " ").replace(/ {2,}/g, " ").trim();
}

/** Rows of the picker for a dsh/search answer, in the server's order. */
export function searchItems(results: SearchResult[], now: number): SearchItem[] {
  return results.map((r) => {
    const title = r.displayTitle || r.label || r.sessionId;
    const where: string[] = [];
    if (r.cwd) {
      where.push(r.cwd);
    }
    if (typeof r.createdAt === "number" && r.createdAt > 0) {
      where.push(`created ${ago(r.createdAt, now)}`);
    }
    const matches = r.matches ?? [];
    let detail = "";
    if (matches.length > 0) {
      const m = matches[0];
      detail = `${m.role ? m.role + ": " : ""}${oneLine(m.excerpt ?? "")}`;
      if (detail.length > MAX_DETAIL) {
        detail = detail.slice(0, MAX_DETAIL - 1) + "…";
      }
      if (matches.length > 1) {
        detail += ` (+${matches.length - 1} more)`;
      }
    }
    const item: SearchItem = { label: title, description: where.join(" · "), detail, sessionId: r.sessionId, title };
    if (typeof matches[0]?.seq === "number") {
      item.seq = matches[0].seq;
    }
    return item;
  });
}

/** A position and a range as LSP writes them. */
export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

/** Where a search hit opens: the preview view's URI and the range to select (the hit's words). */
export interface HitLocation {
  uri: string;
  selection: LspRange;
}

function isPosition(p: unknown): p is LspPosition {
  const q = p as LspPosition | null;
  return !!q && Number.isInteger(q.line) && Number.isInteger(q.character) && q.line >= 0 && q.character >= 0;
}

/**
 * The location of a dsh/preview answer asked with a hit's seq and the
 * query (docs/search.md): its dsh-refls: URI and selectionRange; undefined
 * when the answer names no view of that scheme or no valid range (a server
 * that predates it answers the preview alone).
 */
export function hitLocation(answer: unknown): HitLocation | undefined {
  const a = answer as { uri?: unknown; selectionRange?: { start?: unknown; end?: unknown } } | null;
  if (!a || typeof a.uri !== "string" || !a.uri.startsWith("dsh-refls:/session/")) {
    return undefined;
  }
  const r = a.selectionRange;
  if (!r || !isPosition(r.start) || !isPosition(r.end)) {
    return undefined;
  }
  return { uri: a.uri, selection: { start: r.start, end: r.end } };
}

/** Error code of a setting that stops the request (SPEC §2.4). */
export const INVALID_CONFIG = "SESSION_REFERENCE_INVALID_CONFIG";

/** Reports whether a failed dsh/search says body search is switched off (recallSearch: false). */
export function isSearchOff(err: unknown): boolean {
  const data = (err as { data?: { code?: unknown } } | null)?.data;
  return !!data && data.code === INVALID_CONFIG;
}

/** What the picker shows for one query. */
export type SearchState<R> =
  | { kind: "empty" }
  | { kind: "busy"; query: string }
  | { kind: "done"; query: string; results: R }
  | { kind: "failed"; query: string; error: unknown };

/**
 * Runs one search per query, aborting the previous one, and shows only the
 * answer to the latest query: an answer that arrives after a newer query was
 * typed is dropped, whatever order the answers come in.
 */
export class LatestSearch<R> {
  private current: AbortController | undefined;
  private generation = 0;

  constructor(
    private readonly search: (query: string, signal: AbortSignal) => Promise<R>,
    private readonly show: (state: SearchState<R>) => void,
  ) {}

  /** Starts the search for query (blank: nothing is asked, the list is emptied). */
  async update(query: string): Promise<void> {
    this.current?.abort();
    this.current = undefined;
    const gen = ++this.generation;
    if (query.trim() === "") {
      this.show({ kind: "empty" });
      return;
    }
    const ctl = new AbortController();
    this.current = ctl;
    this.show({ kind: "busy", query });
    let state: SearchState<R>;
    try {
      state = { kind: "done", query, results: await this.search(query, ctl.signal) };
    } catch (error) {
      state = { kind: "failed", query, error };
    }
    if (gen === this.generation && !ctl.signal.aborted) {
      this.current = undefined;
      this.show(state);
    }
  }

  /** Aborts the search in flight; later answers are dropped. */
  dispose(): void {
    this.current?.abort();
    this.current = undefined;
    this.generation++;
  }
}

// Read-only views of the `dsh-refls:` scheme and the rules around them.
// This module does not import vscode so that it can be tested with Node's
// own test runner; extension.ts registers the content provider.

/** Scheme of the read-only views the extension serves; the server never diagnoses it. */
export const VIEW_SCHEME = "dsh-refls";

/** Scheme of session mentions; Markdown makes `@[x](dsh-session:…)` a link that this scheme resolves. */
export const SESSION_SCHEME = "dsh-session";

/** Path of the index status view. */
export const STATUS_PATH = "/status/Index status.md";

/** How many prepared messages are kept for their views (older ones say they are gone). */
export const KEPT_PREPARED = 20;

/** Paths of the two views of the n-th prepared message. */
export function preparedPaths(n: number): { message: string; context: string } {
  return {
    message: `/prepared/${n}/Prepared message.md`,
    context: `/prepared/${n}/Referenced sessions.md`,
  };
}

/** What a view URI shows: a kept text, or the recall preview the server serves for a session. */
export type ViewKind = "kept" | "session";

/**
 * Says how a view URI is served: session previews (`dsh-refls:/session/…`
 * from go to definition and document links, `dsh-session:…` from Markdown
 * links) are asked of the server; every other view holds text the extension kept.
 */
export function viewKind(scheme: string, path: string): ViewKind {
  if (scheme === SESSION_SCHEME || path.startsWith("/session/")) {
    return "session";
  }
  return "kept";
}

/** The texts of kept views, bounded: the oldest prepared message is dropped first. */
export class KeptViews {
  private readonly texts = new Map<string, string>();
  private readonly prepared: string[][] = [];

  /** Keeps the texts of one prepared message (keyed by their view paths). */
  addPrepared(views: Record<string, string>): void {
    for (const [p, text] of Object.entries(views)) {
      this.texts.set(p, text);
    }
    this.prepared.push(Object.keys(views));
    while (this.prepared.length > KEPT_PREPARED) {
      for (const p of this.prepared.shift() ?? []) {
        this.texts.delete(p);
      }
    }
  }

  /** Sets the text of a view that is replaced on each run (the status). */
  set(path: string, text: string): void {
    this.texts.set(path, text);
  }

  /** The text of a view, or a note that it is gone. */
  get(path: string): string {
    return this.texts.get(path) ?? "# This view is gone\n\nRun the command again to show it.\n";
  }
}

/** What serverServesViews reads of the initialize result. */
export interface InitializeResultLike {
  capabilities?: { workspace?: { textDocumentContent?: { schemes?: unknown } } };
}

/**
 * Reports whether the server serves the documents of the dsh-refls: scheme
 * itself: its capabilities announce LSP 3.18 workspace/textDocumentContent
 * for that scheme, and the language client registers the provider.
 */
export function serverServesViews(result: InitializeResultLike | undefined): boolean {
  const schemes = result?.capabilities?.workspace?.textDocumentContent?.schemes;
  return Array.isArray(schemes) && schemes.includes(VIEW_SCHEME);
}

/** The URIs of a prepared message's views, as a server that serves them names them. */
export interface PreparedViewUris {
  message: string;
  context?: string;
}

/**
 * The views of a dsh/prepare answer to `views: true`: the message's URI
 * and, when the message mentions a session, the context's; undefined when
 * the answer names no message view, or a view of another scheme.
 */
export function preparedViewUris(result: unknown): PreparedViewUris | undefined {
  const v = (result as { views?: { message?: unknown; context?: unknown } } | null)?.views;
  const ours = (u: unknown): u is string => typeof u === "string" && u.startsWith(`${VIEW_SCHEME}:`);
  if (!v || !ours(v.message) || (v.context !== undefined && !ours(v.context))) {
    return undefined;
  }
  return v.context === undefined ? { message: v.message } : { message: v.message, context: v.context };
}

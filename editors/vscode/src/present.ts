// Turning dsh/prepare and dsh/status answers into text a person reads.
// This module does not import vscode so that it can be tested with Node's own
// test runner; extension.ts only opens the documents it describes.

/** One reference as dsh/prepare reports it (SPEC §2.3 step 10); unknown fields are kept. */
export interface PreparedReference {
  sessionId?: string;
  label?: string;
  capturedFormatVersion?: number;
  capturedThroughSeq?: number | null;
  compacted?: boolean;
  originalMessages?: number;
  retainedMessages?: number;
  omittedMessages?: number;
  omittedBytes?: number;
  truncated?: boolean;
  inputIndex?: number;
  [key: string]: unknown;
}

/** The context message of SPEC §2.3 step 10. */
export interface ContextMessage {
  source?: { kind?: string; references?: PreparedReference[]; [key: string]: unknown };
  content?: { type?: string; text?: string }[];
  role?: string;
  id?: string;
}

/** The answer of dsh/prepare (SPEC §4.3). */
export interface PrepareResult {
  content: unknown;
  references?: unknown;
  additionalContext?: ContextMessage | null;
}

/** What the "Prepare Message" command shows. */
export interface PreparedPresentation {
  /** The message as it would be sent: mentions rewritten (replace) or kept (preserve). */
  message: string;
  /** The prompt text of the context message, or undefined when the message mentions no session. */
  context?: string;
  /** One line for a notification: how many sessions, how much was left out. */
  summary: string;
}

/** Error raised when an answer does not have the shape SPEC §4.3 promises. */
export class UnexpectedAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnexpectedAnswerError";
  }
}

/**
 * Text of a message content: a string as it is, or the `text` blocks of a
 * block list joined with a newline (the same rule SPEC §2.3 uses for projection).
 */
export function contentText(content: unknown): string {
  if (typeof content === "string") {
    return content;
  }
  if (Array.isArray(content)) {
    const texts: string[] = [];
    for (const block of content) {
      if (block && typeof block === "object" && (block as { type?: unknown }).type === "text") {
        const text = (block as { text?: unknown }).text;
        if (typeof text === "string") {
          texts.push(text);
        }
      }
    }
    return texts.join("\n");
  }
  throw new UnexpectedAnswerError(`dsh/prepare returned content of type ${content === null ? "null" : typeof content}`);
}

/** Stats of every reference in the context message, in input order. */
export function contextReferences(result: PrepareResult): PreparedReference[] {
  const refs = result.additionalContext?.source?.references;
  return Array.isArray(refs) ? refs : [];
}

/** Plural helper for counts in summaries. */
function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Builds the texts the "Prepare Message" command opens from a dsh/prepare answer. */
export function presentPrepared(result: PrepareResult): PreparedPresentation {
  if (result === null || typeof result !== "object") {
    throw new UnexpectedAnswerError("dsh/prepare returned no result object");
  }
  const message = contentText(result.content);
  const ctx = result.additionalContext;
  if (!ctx) {
    return { message, summary: "No session mentions: the message is sent unchanged, without context." };
  }
  const first = Array.isArray(ctx.content) ? ctx.content[0] : undefined;
  if (!first || typeof first.text !== "string") {
    throw new UnexpectedAnswerError("dsh/prepare returned a context message without text");
  }
  const refs = contextReferences(result);
  const truncated = refs.filter((r) => r.truncated === true);
  const parts = [`Prepared with ${count(refs.length, "session reference", "session references")}`];
  if (truncated.length > 0) {
    const bytes = truncated.reduce((sum, r) => sum + (typeof r.omittedBytes === "number" ? r.omittedBytes : 0), 0);
    const msgs = truncated.reduce((sum, r) => sum + (typeof r.omittedMessages === "number" ? r.omittedMessages : 0), 0);
    parts.push(
      `${count(truncated.length, "snapshot", "snapshots")} shortened ` +
        `(${count(msgs, "message", "messages")} and ${count(bytes, "byte", "bytes")} left out)`,
    );
  } else if (refs.length > 0) {
    parts.push("nothing left out");
  }
  return { message, context: first.text, summary: parts.join("; ") + "." };
}

/** Renders a dsh/status answer as Markdown: scalar facts as a list, nested facts as JSON. */
export function presentStatus(status: unknown): string {
  const lines = ["# dsh-refls index status", ""];
  if (status === null || typeof status !== "object" || Array.isArray(status)) {
    lines.push("```json", JSON.stringify(status, null, 2), "```");
    return lines.join("\n") + "\n";
  }
  const nested: [string, unknown][] = [];
  for (const [key, value] of Object.entries(status as Record<string, unknown>)) {
    if (value !== null && typeof value === "object") {
      nested.push([key, value]);
    } else {
      lines.push(`- **${key}**: ${value === null ? "none" : String(value)}`);
    }
  }
  for (const [key, value] of nested) {
    lines.push("", `## ${key}`, "", "```json", JSON.stringify(value, null, 2), "```");
  }
  return lines.join("\n") + "\n";
}

/** Turns a failed request (a JSON-RPC ResponseError or any thrown value) into one readable line. */
export function describeError(err: unknown): string {
  if (err && typeof err === "object") {
    const e = err as { message?: unknown; code?: unknown; data?: unknown };
    const message = typeof e.message === "string" && e.message !== "" ? e.message : "request failed";
    const data = e.data as { code?: unknown } | undefined;
    if (data && typeof data === "object" && typeof data.code === "string") {
      return `${message} (${data.code})`;
    }
    if (typeof e.code === "number") {
      return `${message} (JSON-RPC ${e.code})`;
    }
    return message;
  }
  return String(err);
}

/** The server command that forgets this workspace's picks (frecency). */
export const FORGET_PICKS_COMMAND = "dsh-refls.forgetPicks";

/**
 * What "DSH: Forget Picks" says after the server's answer to
 * workspace/executeCommand dsh-refls.forgetPicks ({forgotten: n}).
 */
export function presentForgotten(result: unknown): string {
  const n = (result as { forgotten?: unknown } | null)?.forgotten;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0) {
    throw new UnexpectedAnswerError(`${FORGET_PICKS_COMMAND} answered ${JSON.stringify(result)}, not {"forgotten": n}`);
  }
  if (n === 0) {
    return "There were no picks to forget in this workspace.";
  }
  return `Forgot the picks of ${n} ${n === 1 ? "session or file" : "sessions and files"} in this workspace; the @ menu ranks by match and recency alone until you pick again.`;
}

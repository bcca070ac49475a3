// Continuing from a session, without VS Code: the server's command
// dsh-refls.continueFrom answers the text of a new prompt (the session's
// mention, its last request and answer quoted); the extension opens it as
// an untitled Markdown document. The code action "Continue from this
// session" carries the command; the server offers it only to a client
// that declares the experimental capability dshContinueFrom.

import { UnexpectedAnswerError } from "./present";

/** The server's command; its one argument is the session id. */
export const CONTINUE_COMMAND = "dsh-refls.continueFrom";

/** The experimental client capability that asks for the code action. */
export const CONTINUE_CAPABILITY = "dshContinueFrom";

/** The answer of CONTINUE_COMMAND. */
export interface ContinueResult {
  text: string;
  sessionId: string;
  title: string;
  redactions?: number;
}

/** Checks the command's answer; throws UnexpectedAnswerError on anything else. */
export function continueResult(res: unknown): ContinueResult {
  const r = res as Partial<ContinueResult> | null;
  if (!r || typeof r !== "object" || typeof r.text !== "string" || typeof r.sessionId !== "string" || typeof r.title !== "string") {
    throw new UnexpectedAnswerError(`${CONTINUE_COMMAND} answered ${JSON.stringify(res)}`);
  }
  return r as ContinueResult;
}

/**
 * The session id of the first "continue" code action among the server's
 * answer to textDocument/codeAction, undefined when there is none.
 */
export function continueSessionOf(actions: unknown): string | undefined {
  if (!Array.isArray(actions)) {
    return undefined;
  }
  for (const a of actions) {
    const cmd = (a as { command?: { command?: unknown; arguments?: unknown } } | null)?.command;
    if (cmd?.command === CONTINUE_COMMAND && Array.isArray(cmd.arguments) && typeof cmd.arguments[0] === "string") {
      return cmd.arguments[0];
    }
  }
  return undefined;
}

/** One row of the session picker. */
export interface SessionPick {
  label: string;
  description?: string;
  detail: string;
  sessionId: string;
}

/** The rows of the session picker from a dsh/candidates answer, in its order. */
export function sessionPicks(cands: unknown): SessionPick[] {
  if (!Array.isArray(cands)) {
    throw new UnexpectedAnswerError(`dsh/candidates answered ${JSON.stringify(cands)}`);
  }
  const out: SessionPick[] = [];
  for (const c of cands as { sessionId?: unknown; displayTitle?: unknown; cwd?: unknown; workingDirectory?: unknown }[]) {
    if (typeof c?.sessionId !== "string") {
      continue;
    }
    const title = typeof c.displayTitle === "string" && c.displayTitle !== "" ? c.displayTitle : c.sessionId;
    const dir = typeof c.workingDirectory === "string" ? c.workingDirectory : typeof c.cwd === "string" ? c.cwd : undefined;
    out.push({ label: title, description: dir, detail: c.sessionId, sessionId: c.sessionId });
  }
  return out;
}

/**
 * What a refused save means for the person editing. Pure. A conflict is decided by revision only: the server's
 * CONFLICT for a draft_conflict (it compared the base revision); any other CONFLICT (such as a name already taken) is a
 * refusal in words. A refusal in words (a validation, a role) shows the server's sentence.
 * Anything else (busy, unreachable, timed out, a network error) is the server's trouble, not the draft's: the change
 * is kept and saved again by itself.
 */
export type SaveOutcome = { kind: "conflict" } | { kind: "refused"; text: string } | { kind: "busy" };

const refusals = new Set(["BAD_REQUEST", "FORBIDDEN", "UNAUTHORIZED", "NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNPROCESSABLE_CONTENT"]);

export function saveOutcome(error: unknown): SaveOutcome {
  const data = (error as { data?: { code?: unknown; holdfast?: { code?: unknown } } } | null)?.data;
  const code = data?.code;
  if (code === "CONFLICT" && data?.holdfast?.code === "draft_conflict") return { kind: "conflict" };
  if (typeof code === "string" && (refusals.has(code) || code === "CONFLICT")) {
    const text = (error as Error).message;
    return { kind: "refused", text: text && text.length < 400 ? text : "The server refused this change." };
  }
  return { kind: "busy" };
}

/** Waits between automatic retries of a busy save: 2 s, 4 s, 8 s, 16 s, then every 30 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000, 2_000 * 2 ** Math.max(0, attempt - 1));
}

export const busyWords = "Holdfast is busy; your change is kept and will be saved";

import { pausedCallsWords } from "../../providers/connections/paused-calls";

/**
 * A step's error (its `code` and `message`, as the connectors and the effect ledger write them) in plain words: what
 * happened, and what a person can do about it. Pure.
 */

export interface StepErrorLike {
  code?: string;
  message?: string;
  reason?: string;
  status?: number;
  exhausted?: boolean;
  attempts?: number;
  connection?: string;
  estimateMicros?: number;
  smtpCode?: number | null;
  key?: string;
  [k: string]: unknown;
}

export interface Why {
  /** What happened: "the server answered 404 (not found)". */
  what: string;
  /** What to do about it: "check the address in the step, publish, then retry". */
  todo: string;
}

const statusNames: Record<number, string> = {
  400: "bad request",
  401: "not signed in",
  403: "forbidden",
  404: "not found",
  408: "request timeout",
  409: "conflict",
  410: "gone",
  422: "unprocessable",
  425: "too early",
  429: "too many requests",
  500: "server error",
  502: "bad gateway",
  503: "unavailable",
  504: "gateway timeout",
};

/** "answered 503 (unavailable)". */
export function answeredWords(status: number): string {
  const name = statusNames[status];
  return `answered ${status}${name ? ` (${name})` : ""}`;
}

/** One error as a short phrase (for an attempt that was retried): "answered 503 (unavailable)", "timed out". */
export function errorPhrase(e: StepErrorLike | null | undefined): string {
  if (!e) return "failed";
  const code = e.code ?? "";
  const http = /^http_(\d{3})$/.exec(code);
  if (http) return answeredWords(Number(http[1]));
  if (code === "timeout") return "timed out";
  if (code === "network") return "could not connect";
  if (code === "smtp_unreachable") return "could not reach the mail server";
  if (code === "smtp_uncertain") return "lost the mail server mid-send";
  const smtp = /^smtp_(\d{3})$/.exec(code);
  if (smtp) return `the mail server refused it (${smtp[1]})`;
  if (code === "handler_error") return `broke unexpectedly (${e.message ?? "no message"})`;
  if (code === "effect_taken_over") return "was taken over by another attempt";
  return e.message ?? code ?? "failed";
}

/** Why a step failed for good, and what to do. */
export function failureWhy(e: StepErrorLike | null | undefined): Why {
  const retry = "then use Retry from the failed step";
  // A retry re-runs the step of this run's own version: a published fix reaches only a new run.
  const rerun = "then Run again with the same input (a retry would use this run's version, without the fix)";
  if (!e) return { what: "it failed without a recorded error", todo: `check the Details below, ${retry}` };
  const code = e.code ?? "";
  const tries = e.exhausted ? (e.attempts === 1 ? `its only attempt ${errorPhrase(e)}` : `gave up after ${e.attempts ?? "all"} attempts; the last one ${errorPhrase(e)}`) : null;
  const http = /^http_(\d{3})$/.exec(code);
  if (tries) {
    return { what: tries, todo: `check that the service is up (its status page, or the address in the step), ${retry}` };
  }
  if (http) {
    const status = Number(http[1]);
    const todo =
      status === 404 || status === 410
        ? "check the address in the step, publish the fix"
        : status === 400 || status === 422
          ? "check what the step sends (its body and fields), publish the fix"
          : "check the service";
    return { what: `the service ${answeredWords(status)}, which another attempt would not change`, todo: `${todo}, ${todo.includes("publish") ? rerun : retry}` };
  }
  switch (code) {
    case "template_error":
      return { what: `a variable in the step's text has no value (${e.message ?? "template error"})`, todo: `fix the step's text or the data sent to the trigger, publish, ${rerun}` };
    case "missing_connection":
      return { what: `the step's connection does not exist (${e.message ?? ""})`.replace(" ()", ""), todo: `add it in Settings -> Connections, ${retry}` };
    case "bad_connection":
      return { what: `the step's connection is incomplete (${e.message ?? ""})`.replace(" ()", ""), todo: `complete it in Settings -> Connections, ${retry}` };
    case "credential_not_for_url":
      return { what: e.message ?? "the connection's credential is not for this address", todo: `fix the address or the connection's base URL, ${retry}` };
    case "bad_recipient":
      return { what: e.message ?? "the recipient is not one email address", todo: "fix the step's To field or the contact's address, then Run again" };
    case "model_bad_answer":
      return { what: "the model's answer had no text", todo: `check the model connection's settings, ${retry}` };
    case "egress_refused":
    case "egress_denied":
      return { what: `the address is not allowed for outside calls (${e.message ?? ""})`, todo: "an operator can allow it (HOLDFAST_EGRESS_ALLOW); otherwise change the step" };
    case "missing_node":
    case "unknown_kind":
      return { what: e.message ?? "the step is not in the automation's version", todo: "publish a version that has it, then Run again" };
  }
  const smtp = /^smtp_(\d{3})$/.exec(code);
  if (smtp) return { what: `the mail server refused the message for good (${smtp[1]}: ${e.message ?? ""})`, todo: `check the recipient and the mailbox, ${retry}` };
  if (code.startsWith("egress")) return { what: `the address is not allowed for outside calls (${e.message ?? code})`, todo: "an operator can allow it; otherwise change the step" };
  return { what: e.message ?? code ?? "it failed", todo: `check the Details below, ${retry}` };
}

/** Why a step is on hold (parked), and what to do. */
export function parkedWhy(e: StepErrorLike | null | undefined, usd: (micros: number) => string, when?: (at: Date) => string): Why {
  const code = e?.code ?? "";
  switch (code) {
    case "needs_review":
      return {
        what: `the outside call may or may not have happened${e?.key ? ` (request id ${e.key})` : ""}, and the service cannot tell a repeat from a new one`,
        todo: "check the service, then say what you found: it happened, send it again (marked as the same request), or abandon the step",
      };
    case "budget_exhausted":
      return {
        what: `the organisation's model budget cannot cover this draft${e?.estimateMicros !== undefined ? ` (up to ${usd(e.estimateMicros)})` : ""}`,
        todo: "raise the model budget, then Resume",
      };
    case "needs_reconnect":
      return {
        what: e?.reason ?? `the connection${e?.connection ? ` "${e.connection}"` : ""} needs reconnecting`,
        todo: `fix ${e?.connection ? `"${e.connection}"` : "the connection"} in Settings -> Connections, then Resume`,
      };
    case "email_differs":
    case "email_not_approved":
      return {
        what: e?.reason ?? "the email is not the one that was approved",
        todo: "cancel the run and start it again, so the email is approved as it will be sent; Resume sends it only if it now matches what was approved",
      };
    case "breaker_open": {
      const retryAt = typeof e?.retryAt === "string" ? new Date(e.retryAt) : null;
      const what =
        e?.connection && typeof e.minCalls === "number" && typeof e.failedCalls === "number" && typeof e.windowMs === "number"
          ? pausedCallsWords({ connection: e.connection, failedCalls: e.failedCalls, minCalls: e.minCalls, windowMs: e.windowMs, retryAt }, when)
          : `Calls to ${e?.connection ? `"${e.connection}"` : "the connection"} are paused after repeated failures; Holdfast tries one call again shortly`;
      return {
        what: `${what.charAt(0).toLowerCase()}${what.slice(1)}`,
        todo: "nothing, usually: the run goes on by itself once a call succeeds again; Resume tries now",
      };
    }
  }
  return { what: e?.reason ?? e?.message ?? "the step is on hold", todo: "fix the cause, then Resume" };
}

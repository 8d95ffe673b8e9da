import { isDatabaseUnreachable, unavailableRetryAfterSeconds } from "@holdfast/core/run";
import { outages } from "./db";
import { failureFor } from "./failure";

/** What a page's loads come to while the database cannot be reached: the page shows <Unavailable /> instead. */
export const unavailable = Symbol("database unavailable");

/**
 * Runs a page's database loads. A lost database becomes `unavailable` (and one line in the log per outage, through
 * the web's watch); anything else, including Next's redirects and not-found, is thrown on as before.
 */
export async function orUnavailable<T>(load: () => Promise<T>): Promise<T | typeof unavailable> {
  try {
    return await load();
  } catch (error) {
    if (!isDatabaseUnreachable(error)) throw error;
    outages.report(error);
    return unavailable;
  }
}

/**
 * An API route's answer while the database cannot be reached: 503 with Retry-After and a sentence saying what to do
 * (`message`), instead of Next's 500. The outage is one line in the log (the web's watch), not one per request. Any
 * other failure is put in words too (server/failure.ts): a busy or timed-out database is 503 "Holdfast is busy",
 * anything else 500 with a sentence and the reference that is in the log; never a library's text.
 */
export async function answerOrUnavailable(answer: () => Promise<Response>, message: string): Promise<Response> {
  try {
    return await answer();
  } catch (error) {
    if (isDatabaseUnreachable(error)) {
      outages.report(error);
      return Response.json(
        { error: { code: "database_unavailable", message } },
        { status: 503, headers: { "retry-after": String(unavailableRetryAfterSeconds) } },
      );
    }
    const failure = failureFor(error, "api");
    if (failure.kind === "busy") {
      return Response.json({ error: { code: "busy", message: failure.message } }, { status: 503, headers: { "retry-after": "5" } });
    }
    return Response.json({ error: { code: failure.kind === "exists" ? "conflict" : "internal", message: failure.message } }, { status: failure.kind === "exists" ? 409 : 500 });
  }
}

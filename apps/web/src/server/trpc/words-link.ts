import { TRPCClientError, type TRPCLink } from "@trpc/client";
import { observable } from "@trpc/server/observable";
import type { AppRouter } from "./router";

/** What the browser says when Holdfast does not answer at all (offline, the server restarting, a proxy's error page). */
export const unreachableSentence = "Holdfast cannot be reached right now: your change is kept and will be saved. Try again in a moment.";

/**
 * The browser's last word on a failed call: an answer in tRPC's shape (already in words, server/failure.ts) passes as
 * it is; a call with no such answer ("Failed to fetch", a proxy's HTML error page that is no JSON) becomes a sentence
 * with the code the client retries on (SERVICE_UNAVAILABLE), never the browser's or a parser's message.
 */
export const wordsLink: TRPCLink<AppRouter> = () => ({ next, op }) =>
  observable((observer) =>
    next(op).subscribe({
      next: (value) => observer.next(value),
      complete: () => observer.complete(),
      error: (error) => {
        if (error.data) return observer.error(error);
        observer.error(
          new TRPCClientError(unreachableSentence, {
            cause: error,
            result: { error: { code: -32603, message: unreachableSentence, data: { code: "SERVICE_UNAVAILABLE", httpStatus: 503 } } } as never,
          }),
        );
      },
    }),
  );

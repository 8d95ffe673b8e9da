import { createLogger } from "@holdfast/core/base";
import { busyFormSentence, describeFailure, type Failure } from "@holdfast/core/run";
import { env } from "../env";
import { outages } from "./db";

let log: ReturnType<typeof createLogger> | undefined;

/**
 * A failure of Holdfast's own, as the person sees it (core/ops/failure.ts decides the sentence): a lost or saturated
 * database is reported to the web's outage watch (one line per outage), an unknown failure is logged with the
 * reference its sentence quotes. Every edge asks here: tRPC (trpc/init.ts), server actions, route handlers.
 */
export function failureFor(error: unknown, where: string): Failure {
  const failure = describeFailure(error);
  if (failure.kind === "busy") {
    if (!outages.report(error)) (log ??= createLogger("web", env.LOG_LEVEL)).warn({ where, err: error }, `${where}: the database was busy`);
  } else if (failure.kind === "unknown") {
    (log ??= createLogger("web", env.LOG_LEVEL)).error({ where, reference: failure.reference, err: error }, `${where} failed (reference ${failure.reference})`);
  }
  return failure;
}

/**
 * The sentence for a failed form post (a server action): the same as failureFor's, except that a busy database is
 * told as "not saved", since no page script keeps the change to send it again.
 */
export function formFailureSentence(error: unknown, where: string): string {
  const failure = failureFor(error, where);
  return failure.kind === "busy" ? busyFormSentence : failure.message;
}

import { randomBytes } from "node:crypto";
import { pgErrorCode } from "../../base/errors";
import { isDatabaseUnreachable } from "./outage";

/**
 * What a person is told when a request fails for a reason that is not theirs: the one place that turns a database
 * or library error into a sentence (tRPC, server actions and route handlers all ask here). No library's or the
 * database's text ever reaches a page; the original goes to the log under the reference a sentence may quote.
 *
 * - `busy`: the database refused or lost the connection (53300 no free connection slot, a restart, a refused socket)
 *   or the request waited too long for a connection or a query (57014 statement timeout, 55P03 lock timeout, a pool
 *   timeout), or lost a race the database will not serialise (40001, 40P01). Nothing was saved; the same request
 *   again in a moment works: the client retries on it.
 * - `exists`: a unique rule refused a row (23505): a second click or someone else saved the same thing meanwhile.
 * - `unknown`: anything else; the sentence carries a reference id, logged with the error by the caller.
 */
export type FailureKind = "busy" | "exists" | "unknown";

export interface Failure {
  kind: FailureKind;
  /** True when the same request again, unchanged, may succeed (clients retry on these). */
  retry: boolean;
  message: string;
  /** Quoted in `unknown`'s sentence; the caller logs the error with it. */
  reference?: string;
}

export const busySentence = "Holdfast is busy; your change is kept and will be saved. Try again in a moment.";
/** Busy, for a form posted without the page's script (server actions): nothing keeps the change, so say so. */
export const busyFormSentence = "Holdfast is busy, so this was not saved. Try again in a moment.";
export const existsSentence = "This was already saved (by another click or another person meanwhile): reload to see it, then try again if it is still needed.";

/** SQLSTATEs that pass by themselves: statement/lock timeouts, serialisation failures and deadlocks, insufficient resources. */
const passingStates = /^(57014|55P03|40001|40P01|53\d{3})$/;
/** Prisma's own codes for waiting too long: a connection from the pool (P2024), the server (P1008), an interactive transaction (P2028). */
const passingPrismaCodes = new Set(["P1008", "P2024", "P2028"]);
const passingMessages = /statement timeout|canceling statement due to|timed out fetching a new connection|Transaction already closed|could not serialize access/i;

function codesOf(error: unknown): { prisma: string[]; messages: string[] } {
  const prisma: string[] = [];
  const messages: string[] = [];
  let e: unknown = error;
  for (let i = 0; i < 6 && e && typeof e === "object"; i++) {
    const o = e as { code?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
    if (typeof o.code === "string" && /^P\d{4}$/.test(o.code)) prisma.push(o.code);
    if (typeof o.message === "string") messages.push(o.message);
    e = o.meta?.driverAdapterError ?? o.cause;
  }
  return { prisma, messages };
}

/** A short id to find the failure in the log ("ref 3f9a1c2e"). */
export function failureReference(): string {
  return randomBytes(4).toString("hex");
}

/** The sentence for a failure of Holdfast's own (or its database's): never the error's own text. */
export function describeFailure(error: unknown): Failure {
  if (isDatabaseUnreachable(error)) return { kind: "busy", retry: true, message: busySentence };
  const state = pgErrorCode(error);
  const { prisma, messages } = codesOf(error);
  if ((state && passingStates.test(state)) || prisma.some((c) => passingPrismaCodes.has(c)) || messages.some((m) => passingMessages.test(m))) {
    return { kind: "busy", retry: true, message: busySentence };
  }
  if (state === "23505" || prisma.includes("P2002")) return { kind: "exists", retry: false, message: existsSentence };
  const reference = failureReference();
  return {
    kind: "unknown",
    retry: false,
    reference,
    message: `Something went wrong on Holdfast's side and nothing was changed. Try again; if it keeps happening, give your administrator the reference ${reference}.`,
  };
}

/** "maxSteps" -> "max steps"; "approvers.users.0" -> "approvers users" (indexes are no words). */
function fieldWords(path: readonly PropertyKey[]): string {
  const words = path
    .filter((p): p is string => typeof p === "string" && p !== "orgSlug")
    .map((p) => p.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ").toLowerCase());
  return words.join(" ");
}

/** An input that failed validation, in one sentence naming the field(s): "Check max steps: at least 1 step." */
export function invalidInputSentence(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const parts = issues.slice(0, 3).map((i) => {
    const field = fieldWords(i.path);
    const message = /^(Invalid input|Required)/.test(i.message) ? "is missing or not valid" : i.message;
    return field ? `${field}: ${message}` : message;
  });
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  return `Check ${parts.join("; ")}${more}.`.replace(/\.\.$/, ".");
}

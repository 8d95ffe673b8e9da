import { HoldfastError } from "@holdfast/core/base";
import type { Role } from "@holdfast/core/store";
import type { SessionUser } from "@holdfast/core/people";
import { busySentence, invalidInputSentence, isDatabaseUnreachable } from "@holdfast/core/run";
import type { Db } from "@holdfast/db";
import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { z, ZodError } from "zod";
import { outages } from "../db";
import { failureFor } from "../failure";

/**
 * tRPC for the builder and settings. The context is the session's user (from the httpOnly cookie). Every
 * organisation procedure takes `orgSlug`, resolves the user's membership of that organisation now, and hands the
 * procedure `ctx.org` (id and role): every query inside filters by `ctx.org.id`. A user who is not a member gets
 * NOT_FOUND (another organisation's existence is not revealed); a member without the role gets FORBIDDEN.
 */
export interface Context {
  db: Db;
  user: SessionUser | null;
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  /**
   * The last word on what the client sees: mapErrors (below) has already put every failure in words; an error that
   * never reached it (a malformed request, an unknown procedure) or still carries a library's text (an internal
   * error) is worded here, so no stack, library or database text reaches a page. `data.stack` is never sent.
   */
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const worded = wordedMessage(error);
    const { stack: _stack, ...data } = shape.data;
    return {
      ...shape,
      message: worded,
      data: {
        ...data,
        issues: cause instanceof ZodError ? cause.issues.map((i) => ({ path: i.path.join("."), message: i.message })) : undefined,
        holdfast: cause instanceof HoldfastError ? { code: cause.code, problems: (cause as { problems?: unknown }).problems ?? null } : undefined,
      },
    };
  },
});

/** The message a client may show: one of ours (a TRPCError we threw, a core error, an input error), else a sentence. */
function wordedMessage(error: TRPCError): string {
  const cause = error.cause;
  if (cause instanceof ZodError) return invalidInputSentence(cause.issues);
  if (error.code === "INTERNAL_SERVER_ERROR" && !(cause instanceof HoldfastError)) return failureFor(cause ?? error, "request").message;
  if (error.code === "PARSE_ERROR") return "The request could not be read: reload the page and try again.";
  return error.message;
}

export const router = t.router;

/** A lost database as the client sees it (SERVICE_UNAVAILABLE, in words), said once per outage in the log. */
export function databaseUnavailable(cause: unknown): TRPCError {
  outages.report(cause);
  return new TRPCError({ code: "SERVICE_UNAVAILABLE", message: busySentence, cause });
}
export const createCallerFactory = t.createCallerFactory;

/** A failure already put in words (mapErrors): the formatter passes its message on as it is. */
class WordedFailure extends HoldfastError {
  constructor(message: string) {
    super("worded_failure", message);
  }
}

/**
 * Core errors become tRPC errors with their code kept (the client shows the message, the problems inline); a lost
 * database is SERVICE_UNAVAILABLE in words (and one line per outage in the log, through the web's watch). Any other
 * failure that is not ours (a database or library error) is put in words by server/failure.ts: a saturated or
 * timed-out database is SERVICE_UNAVAILABLE ("Holdfast is busy...", 503: the client retries on that code), a
 * unique violation CONFLICT, anything else INTERNAL_SERVER_ERROR with a reference id that is in the log.
 */
const mapErrors = t.middleware(async ({ next, path }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause;
  // Our own refusals (a TRPCError thrown with a sentence: UNAUTHORIZED, FORBIDDEN, PRECONDITION_FAILED...) stand.
  if (!cause && result.error.code !== "INTERNAL_SERVER_ERROR") return result;
  throw wordedTrpcError(cause ?? result.error, path);
});

/**
 * Any error as the client sees it, with the code it can act on: a lost or saturated database or a timeout is
 * SERVICE_UNAVAILABLE with "Holdfast is busy..." (the client retries on it), an input that failed validation
 * BAD_REQUEST naming the field, a core error its own code and sentence, a unique violation CONFLICT, anything else
 * INTERNAL_SERVER_ERROR with a reference id that is in the log (server/failure.ts decides the words).
 */
export function wordedTrpcError(error: unknown, where: string): TRPCError {
  if (error instanceof TRPCError && error.cause === undefined) return error;
  if (isDatabaseUnreachable(error)) return databaseUnavailable(error);
  if (error instanceof ZodError) return new TRPCError({ code: "BAD_REQUEST", message: invalidInputSentence(error.issues), cause: error });
  if (error instanceof WordedFailure) return new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
  if (error instanceof HoldfastError) {
    const code = error.code.endsWith("not_found")
      ? "NOT_FOUND"
      : error.code.endsWith("_forbidden")
        ? "FORBIDDEN"
        : error.code === "draft_conflict" || error.code.endsWith("_exists")
          ? "CONFLICT"
          : "BAD_REQUEST";
    return new TRPCError({ code, message: error.message, cause: error });
  }
  const failure = failureFor(error, where);
  const code = failure.kind === "busy" ? "SERVICE_UNAVAILABLE" : failure.kind === "exists" ? "CONFLICT" : "INTERNAL_SERVER_ERROR";
  return new TRPCError({ code, message: failure.message, cause: new WordedFailure(failure.message) });
}

export const authed = t.procedure.use(mapErrors).use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
  return next({ ctx: { ...ctx, user: ctx.user } });
});

const rank: Record<Role, number> = { viewer: 0, approver: 1, editor: 2, owner: 3 };

export const orgInput = z.object({ orgSlug: z.string().min(1).max(100) });

function orgProcedure(min: Role) {
  return authed.input(orgInput).use(({ ctx, input, next }) => {
    const m = ctx.user.memberships.find((x) => x.orgSlug === input.orgSlug);
    if (!m) throw new TRPCError({ code: "NOT_FOUND", message: `organisation "${input.orgSlug}" not found` });
    if (rank[m.role] < rank[min]) throw new TRPCError({ code: "FORBIDDEN", message: `this needs the ${min} role (you are ${m.role})` });
    return next({ ctx: { ...ctx, org: { id: m.orgId, slug: m.orgSlug, role: m.role } } });
  });
}

/** Members may read; editors change automations; owners manage connections and members. */
export const viewerProcedure = orgProcedure("viewer");
export const editorProcedure = orgProcedure("editor");
export const ownerProcedure = orgProcedure("owner");

import { HoldfastError, isDatabaseUnreachable, type Role, type SessionUser } from "@holdfast/core";
import type { Db } from "@holdfast/db";
import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { z, ZodError } from "zod";
import { outages } from "../db";

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
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    return {
      ...shape,
      data: {
        ...shape.data,
        issues: cause instanceof ZodError ? cause.issues.map((i) => ({ path: i.path.join("."), message: i.message })) : undefined,
        holdfast: cause instanceof HoldfastError ? { code: cause.code, problems: (cause as { problems?: unknown }).problems ?? null } : undefined,
      },
    };
  },
});

export const router = t.router;

/** A lost database as the client sees it (SERVICE_UNAVAILABLE, in words), said once per outage in the log. */
export function databaseUnavailable(cause: unknown): TRPCError {
  outages.report(cause);
  return new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "Holdfast cannot reach its database right now: try again in a minute", cause });
}
export const createCallerFactory = t.createCallerFactory;

/**
 * Core errors become tRPC errors with their code kept (the client shows the message, the problems inline); a lost
 * database is SERVICE_UNAVAILABLE in words (and one line per outage in the log, through the web's watch).
 */
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && isDatabaseUnreachable(result.error.cause)) throw databaseUnavailable(result.error.cause);
  if (!result.ok && result.error.cause instanceof HoldfastError) {
    const e = result.error.cause;
    const code = e.code.endsWith("not_found")
      ? "NOT_FOUND"
      : e.code.endsWith("_forbidden")
        ? "FORBIDDEN"
        : e.code === "draft_conflict" || e.code.endsWith("_exists")
          ? "CONFLICT"
          : "BAD_REQUEST";
    throw new TRPCError({ code, message: e.message, cause: e });
  }
  return result;
});

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

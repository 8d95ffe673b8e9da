import { connectionsLimitsView, connectionsSetLimits } from "@holdfast/core/store";
import { connectionLimits, limitsOf } from "@holdfast/core/providers";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { ownerProcedure, router, viewerProcedure } from "../init";

/**
 * Settings -> Connections -> Limits: a connection's cap on calls in flight across every worker, and its circuit
 * breaker. Validated by core's schema (providers/connections/limits.ts); members read, owners change. Scoped by `ctx.org.id`.
 */
const connectionId = z.string().regex(/^cnx_[0-9a-f]{32}$/, "not a connection id");

export const connectionLimitsRouter = router({
  list: viewerProcedure.query(async ({ ctx }) =>
    (await connectionsLimitsView(ctx.db, ctx.org.id)).map((c) => ({ ...c, limits: limitsOf(c.limits) })),
  ),
  set: ownerProcedure
    .input(z.object({ connectionId, maxConcurrent: z.number().int().nullable(), breaker: z.record(z.string(), z.unknown()) }))
    .mutation(async ({ ctx, input }) => {
      const parsed = connectionLimits.safeParse({ ...(input.maxConcurrent === null ? {} : { maxConcurrent: input.maxConcurrent }), breaker: input.breaker });
      if (!parsed.success) {
        const i = parsed.error.issues[0];
        throw new TRPCError({ code: "BAD_REQUEST", message: `${words[String(i?.path.at(-1))] ?? i?.path.join(".")}: ${i?.message}` });
      }
      if (!(await connectionsSetLimits(ctx.db, ctx.org.id, input.connectionId, parsed.data))) {
        throw new TRPCError({ code: "NOT_FOUND", message: "connection not found" });
      }
      return { limits: parsed.data, message: "Limits saved; they apply to the next call." };
    }),
});

const words: Record<string, string> = {
  maxConcurrent: "Calls at once",
  failureRate: "Failure rate",
  minCalls: "Fewest calls",
  windowMs: "Window",
  coolDownMs: "Cool-down",
};

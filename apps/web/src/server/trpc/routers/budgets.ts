import { budgetsModelPrices, budgetsOf, budgetsSetAllowed, defaultModelBudgetUsd, stepsCountParkedForBudget } from "@holdfast/core/store";
import { runBudgetsOf, setRunBudgets } from "@holdfast/core/run";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { ownerProcedure, router, viewerProcedure } from "../init";

/**
 * Settings -> Budgets: the organisation's model budget (US dollars, stored in micros) with its spend to date, and
 * run budgets (most steps a run may execute, its longest age) as the organisation's defaults and per automation.
 * Members read; owners change. Scoped by `ctx.org.id`.
 */
const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "not an automation");
const steps = z.number().int("a whole number of steps").min(1, "at least 1 step").max(2_000_000_000);
const ageSeconds = z.number().int("a whole number of seconds").min(60, "at least a minute (60 seconds)").max(2_000_000_000);

export const budgets = router({
  model: viewerProcedure.query(async ({ ctx }) => {
    const b = await budgetsOf(ctx.db, ctx.org.id);
    const parked = await stepsCountParkedForBudget(ctx.db, ctx.org.id);
    const prices = await budgetsModelPrices(ctx.db, ctx.org.id);
    return {
      set: b !== null,
      defaultUsd: defaultModelBudgetUsd,
      allowedUsd: (b?.allowedMicros ?? 0) / 1e6,
      spentUsd: (b?.spentMicros ?? 0) / 1e6,
      reservedUsd: (b?.reservedMicros ?? 0) / 1e6,
      parkedSteps: parked,
      /** Each model connection's prices in US dollars per million tokens. */
      models: prices.map((m) => ({
        name: m.name,
        model: m.model,
        inputUsdPerMTok: m.inputMicrosPerMTok === null ? null : m.inputMicrosPerMTok / 1e6,
        outputUsdPerMTok: m.outputMicrosPerMTok === null ? null : m.outputMicrosPerMTok / 1e6,
      })),
    };
  }),
  /** Raising the budget resumes every step parked because it ran out, in the same transaction. */
  setModel: ownerProcedure
    .input(z.object({ usd: z.number({ message: "a number of US dollars" }).min(0, "0 or more US dollars").max(1e9) }))
    .mutation(async ({ ctx, input }) => {
      const resumed = await budgetsSetAllowed(ctx.db, ctx.org.id, Math.round(input.usd * 1e6), `user:${ctx.user.email}`);
      return { resumed, message: `Model budget set to $${input.usd.toFixed(2)} a month${resumed ? `; ${resumed} parked step${resumed === 1 ? "" : "s"} resumed` : ""}.` };
    }),
  runs: viewerProcedure.query(({ ctx }) => runBudgetsOf(ctx.db, ctx.org.id)),
  /** Defaults (automationSlug null) take numbers; an automation's override takes a number or null (use the default). */
  setRuns: ownerProcedure
    .input(z.object({ automationSlug: slug.nullable(), maxSteps: steps.nullable(), maxAgeSeconds: ageSeconds.nullable() }))
    .mutation(async ({ ctx, input }) => {
      if (input.automationSlug === null && (input.maxSteps === null || input.maxAgeSeconds === null)) {
        throw new TRPCError({ code: "BAD_REQUEST", message: "the organisation's defaults need both a number of steps and an age" });
      }
      const set = await setRunBudgets(ctx.db, ctx.org.id, input.automationSlug, { maxSteps: input.maxSteps, maxAgeSeconds: input.maxAgeSeconds });
      return { ...set, message: `Run budgets saved for ${input.automationSlug ?? "the organisation"}; runs already started keep theirs.` };
    }),
});

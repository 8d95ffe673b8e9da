import { automationVersionsHasPublished, automationsStatuses } from "@holdfast/core/store";
import { changeLifecycle, countRunsToStop, describeLifecycle, lifecycleOf, stopAllRuns } from "@holdfast/core/run";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { graphs } from "../../graphs";
import { editorProcedure, router, viewerProcedure } from "../init";
import { automationId, ownAutomation } from "./common";

/**
 * An automation's lifecycle (Active / Paused / Archived), its history, and Stop all runs. Every procedure is scoped by
 * `ctx.org.id` (init.ts); an automation of another organisation is "not found". Owners and editors change things,
 * everyone in the organisation reads.
 */
const version = z.number().int().min(1).nullable().default(null);

export const lifecycleChangeInput = automationId.extend({
  change: z.discriminatedUnion("action", [
    z.object({ action: z.literal("pause"), mode: z.enum(["refuse", "hold"]), runs: z.enum(["continue", "hold"]) }),
    z.object({ action: z.literal("resume") }),
    z.object({ action: z.literal("archive") }),
    z.object({ action: z.literal("restore") }),
  ]),
  reason: z.string().trim().max(500).optional(),
});

export const lifecycle = router({
  /** Every automation's status, for the list (archived ones are hidden there unless asked for). */
  statuses: viewerProcedure.query(({ ctx }) => automationsStatuses(ctx.db, ctx.org.id)),
  get: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    const { state, history } = await lifecycleOf(ctx.db, ctx.org.id, input.automationId);
    // Never published: a Draft (deliveries are refused with 409 until the first Publish), whatever its status says.
    const published = await automationVersionsHasPublished(ctx.db, ctx.org.id, input.automationId);
    return {
      status: state.status,
      published,
      pauseMode: state.pauseMode,
      pauseRuns: state.pauseRuns,
      since: state.statusChangedAt,
      words: describeLifecycle(state),
      history: history.map((h) => ({ ...h, words: describeLifecycle({ status: h.toStatus, pauseMode: h.pauseMode, pauseRuns: h.pauseRuns }) })),
    };
  }),
  change: editorProcedure.input(lifecycleChangeInput).mutation(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    return changeLifecycle(ctx.db, { orgId: ctx.org.id, automationId: input.automationId, change: input.change, by: `user:${ctx.user.email}`, reason: input.reason ?? null });
  }),
  /** Stop all runs, step one: how many it would stop. */
  countRuns: viewerProcedure.input(automationId.extend({ version })).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    return { running: await countRunsToStop(ctx.db, ctx.org.id, input.automationId, input.version) };
  }),
  /** Step two, confirmed with the count the person saw: each run is cancelled as its own Cancel would. */
  stopRuns: editorProcedure
    .input(automationId.extend({ version, reason: z.string().trim().min(1, "say why the runs are being stopped").max(500), confirmCount: z.number().int().min(0) }))
    .mutation(async ({ ctx, input }) => {
      await ownAutomation(ctx.db, ctx.org.id, input.automationId);
      const now = await countRunsToStop(ctx.db, ctx.org.id, input.automationId, input.version);
      // More runs than the person confirmed started since the count: ask again rather than stop runs nobody saw.
      if (now > input.confirmCount) {
        throw new TRPCError({ code: "CONFLICT", message: `${now} runs are running now, not ${input.confirmCount}: check the count and confirm again` });
      }
      return stopAllRuns(ctx.db, graphs, { orgId: ctx.org.id, automationId: input.automationId, version: input.version, reason: input.reason, by: `user:${ctx.user.email}` });
    }),
});

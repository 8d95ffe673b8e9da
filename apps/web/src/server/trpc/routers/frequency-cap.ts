import { automationsCapSettings, automationsSetCappedAction, automationsSetTransactional, sendingRulesFrequencyCap, sendingRulesSetFrequencyCap } from "@holdfast/core/store";
import { frequencyCapOf, frequencyCapSchema } from "@holdfast/core/people";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { editorProcedure, ownerProcedure, router, viewerProcedure } from "../init";
import { automationId } from "./common";

/**
 * The frequency cap (issue 44): Settings -> Frequency cap (the organisation's: members read, owners change, each change
 * recorded with who made it and when) and an automation's part (transactional: exempt; what a capped send does).
 * Marking an automation transactional takes it out of the owner's cap, so it is the owner's to change; what a capped
 * send does (wait or skip) is the automation's editors'. Scoped by `ctx.org.id`; another organisation's automation is
 * "not found".
 */
const notFound = () => new TRPCError({ code: "NOT_FOUND", message: "automation not found" });

export const frequencyCap = router({
  get: viewerProcedure.query(async ({ ctx }) => {
    const stored = await sendingRulesFrequencyCap(ctx.db, ctx.org.id);
    return { cap: frequencyCapOf(stored.frequencyCap), updatedAt: stored.updatedAt, updatedBy: stored.updatedBy };
  }),
  /** `cap: null` turns the cap off. Saving the same cap again changes nothing but the record of who saved it. */
  set: ownerProcedure.input(z.object({ cap: frequencyCapSchema.nullable() })).mutation(async ({ ctx, input }) => {
    await sendingRulesSetFrequencyCap(ctx.db, ctx.org.id, input.cap, `user:${ctx.user.email}`);
    return { cap: input.cap };
  }),
  automation: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    const settings = await automationsCapSettings(ctx.db, ctx.org.id, input.automationId);
    if (!settings) throw notFound();
    const stored = await sendingRulesFrequencyCap(ctx.db, ctx.org.id);
    const role = ctx.org.role;
    return {
      transactional: settings.transactional,
      cappedAction: settings.cappedAction,
      orgCap: frequencyCapOf(stored.frequencyCap),
      /** What the caller may change here (the page shows the rest read-only). */
      mayMarkTransactional: role === "owner",
      mayChooseAction: role === "owner" || role === "editor",
    };
  }),
  setTransactional: ownerProcedure.input(automationId.extend({ transactional: z.boolean() })).mutation(async ({ ctx, input }) => {
    if (!(await automationsSetTransactional(ctx.db, ctx.org.id, input.automationId, input.transactional))) throw notFound();
    return { transactional: input.transactional };
  }),
  setCappedAction: editorProcedure
    .input(automationId.extend({ cappedAction: z.enum(["wait", "skip"], { message: 'what a capped send does is "wait" or "skip"' }) }))
    .mutation(async ({ ctx, input }) => {
      if (!(await automationsSetCappedAction(ctx.db, ctx.org.id, input.automationId, input.cappedAction))) throw notFound();
      return { cappedAction: input.cappedAction };
    }),
});

import { getDraft, previewAutomation, saveDraft, typedSampleLimits } from "@holdfast/core/run";
import { z } from "zod";
import { editorProcedure, router, viewerProcedure } from "../init";
import { automationId, id } from "./common";

/** Where the preview's sample comes from: the automation's stored sample, JSON typed in, or a contact of Settings. */
export const previewSample = z.discriminatedUnion("from", [
  z.object({ from: z.literal("stored") }),
  z.object({ from: z.literal("typed"), json: z.string().max(typedSampleLimits.maxChars, `keep the sample under ${typedSampleLimits.maxChars} characters`) }),
  z.object({ from: z.literal("contact"), contactId: id("ctc") }),
]);

/** The editor's draft: read, and saved guarded by its revision (a stale save is refused with the current draft). */
export const drafts = router({
  get: viewerProcedure.input(automationId).query(({ ctx, input }) => getDraft(ctx.db, ctx.org.id, input.automationId)),
  /**
   * What each step would do for a sample: the graph being edited (unsaved edits included; absent: the saved draft),
   * walked without any outside call and without writing anything. Viewers may preview too.
   */
  preview: viewerProcedure
    .input(
      automationId.extend({
        graph: z.unknown().optional(),
        sample: previewSample,
        assume: z.object({ approval: z.enum(["approved", "rejected"]), reply: z.boolean() }).partial().optional(),
      }),
    )
    .query(({ ctx, input }) => previewAutomation(ctx.db, ctx.org.id, input.automationId, { graph: input.graph, sample: input.sample, ...(input.assume ? { assume: input.assume } : {}) })),
  save: editorProcedure
    .input(automationId.extend({ graph: z.unknown(), baseRevision: z.number().int().min(1) }))
    .mutation(({ ctx, input }) => saveDraft(ctx.db, ctx.org.id, input.automationId, input.graph, input.baseRevision, `user:${ctx.user.email}`)),
});

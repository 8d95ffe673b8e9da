import { automationVersionsListPublished, automationVersionsPublishedPair } from "@holdfast/core/store";
import { diffGraphs, graphSchema } from "@holdfast/core/versions";
import { publishDraft } from "@holdfast/core/run";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { editorProcedure, router, viewerProcedure } from "../init";
import { automationId, ownAutomation } from "./common";

/** Published versions: the list (with running runs), the diff of two, and publishing the draft as the next one. */
export const versions = router({
  list: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    return automationVersionsListPublished(ctx.db, ctx.org.id, input.automationId);
  }),
  diff: viewerProcedure
    .input(automationId.extend({ from: z.number().int().min(1), to: z.number().int().min(1) }))
    .query(async ({ ctx, input }) => {
      const rows = await automationVersionsPublishedPair(ctx.db, ctx.org.id, input.automationId, input.from, input.to);
      const from = rows.find((r) => r.version === input.from);
      const to = rows.find((r) => r.version === input.to);
      if (!from || !to) throw new TRPCError({ code: "NOT_FOUND", message: "version not found" });
      return diffGraphs(graphSchema.parse(from.graph), graphSchema.parse(to.graph));
    }),
  publish: editorProcedure.input(automationId).mutation(({ ctx, input }) => publishDraft(ctx.db, ctx.org.id, input.automationId, `user:${ctx.user.email}`, ctx.org.role)),
});

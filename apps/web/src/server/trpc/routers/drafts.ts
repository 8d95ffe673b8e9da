import { getDraft, saveDraft } from "@holdfast/core";
import { z } from "zod";
import { editorProcedure, router, viewerProcedure } from "../init";
import { automationId } from "./common";

/** The editor's draft: read, and saved guarded by its revision (a stale save is refused with the current draft). */
export const drafts = router({
  get: viewerProcedure.input(automationId).query(({ ctx, input }) => getDraft(ctx.db, ctx.org.id, input.automationId)),
  save: editorProcedure
    .input(automationId.extend({ graph: z.unknown(), baseRevision: z.number().int().min(1) }))
    .mutation(({ ctx, input }) => saveDraft(ctx.db, ctx.org.id, input.automationId, input.graph, input.baseRevision, `user:${ctx.user.email}`)),
});

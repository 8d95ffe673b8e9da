import { suppressionsDelete, suppressionsInsert, suppressionsList } from "@holdfast/core/store";
import { z } from "zod";
import { editorProcedure, ownerProcedure, router, viewerProcedure } from "../init";
import { email } from "./common";

/** Addresses the organisation never emails: editors add, owners remove. */
export const suppressions = router({
  list: viewerProcedure.query(({ ctx }) => suppressionsList(ctx.db, ctx.org.id)),
  add: editorProcedure.input(z.object({ email, reason: z.string().trim().min(1).max(200) })).mutation(async ({ ctx, input }) => {
    await suppressionsInsert(ctx.db, ctx.org.id, input.email, input.reason);
    return { ok: true };
  }),
  remove: ownerProcedure.input(z.object({ email })).mutation(async ({ ctx, input }) => ({
    removed: (await suppressionsDelete(ctx.db, ctx.org.id, input.email)) > 0,
  })),
});

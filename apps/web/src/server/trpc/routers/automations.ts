import { automationsListWithLatest } from "@holdfast/core/store";
import { AutomationExistsError, createAutomation } from "@holdfast/core/versions";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { editorProcedure, router, viewerProcedure } from "../init";

/** The automations list and creating one. */
const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and -");

export const automations = router({
  list: viewerProcedure.query(({ ctx }) => automationsListWithLatest(ctx.db, ctx.org.id)),
  // The automation's trigger credentials (signing secret and URL token) are created with it: no trigger is ever open.
  create: editorProcedure.input(z.object({ name: z.string().trim().min(1).max(200), slug })).mutation(async ({ ctx, input }) => {
    try {
      return await ctx.db.$transaction((tx) => createAutomation(tx, { orgId: ctx.org.id, slug: input.slug, name: input.name }));
    } catch (error) {
      if (error instanceof AutomationExistsError) throw new TRPCError({ code: "CONFLICT", message: error.message });
      throw error;
    }
  }),
});

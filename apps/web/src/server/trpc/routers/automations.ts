import { automationsListWithLatest } from "@holdfast/core/store";
import { createFromTemplate, templateProblems } from "@holdfast/core/run";
import { AutomationExistsError, createAutomation } from "@holdfast/core/versions";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { editorProcedure, router, viewerProcedure } from "../init";

/** The automations list and creating one, empty or from a template (core's versions/kinds/templates). */
const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and -");
const name = z.string().trim().min(1).max(200);
const templateId = z.string().regex(/^[a-z0-9-]{1,60}$/, "a template's id");
// The answers are the template's own to check (its zod schema); here only their size is bounded.
const answers = z.record(z.string().max(60), z.unknown()).refine((a) => JSON.stringify(a).length <= 20_000, "the answers are too long");

export const automations = router({
  list: viewerProcedure.query(({ ctx }) => automationsListWithLatest(ctx.db, ctx.org.id)),
  // The automation's trigger credentials (signing secret and URL token) are created with it: no trigger is ever open.
  create: editorProcedure.input(z.object({ name, slug })).mutation(async ({ ctx, input }) => {
    try {
      return await ctx.db.$transaction((tx) => createAutomation(tx, { orgId: ctx.org.id, slug: input.slug, name: input.name }));
    } catch (error) {
      if (error instanceof AutomationExistsError) throw new TRPCError({ code: "CONFLICT", message: error.message });
      throw error;
    }
  }),
  /** What the template's form still needs: missing answers by question, then the journey's publish problems. */
  templateCheck: editorProcedure.input(z.object({ templateId, answers })).query(({ ctx, input }) => templateProblems(ctx.db, ctx.org.id, input.templateId, input.answers)),
  /** A new automation whose draft is the template's journey; a repeated Create answers with the same automation. */
  createFromTemplate: editorProcedure.input(z.object({ templateId, answers, name, slug })).mutation(async ({ ctx, input }) => {
    try {
      return await createFromTemplate(ctx.db, { orgId: ctx.org.id, ...input });
    } catch (error) {
      // Missing answers (TemplateAnswersError) pass on as BAD_REQUEST with each question named (init.ts).
      if (error instanceof AutomationExistsError) {
        throw new TRPCError({ code: "CONFLICT", message: `An automation with the address "${input.slug}" already exists: give this one another name.` });
      }
      throw error;
    }
  }),
});

import { createSavedEmail, deleteSavedEmail, getSavedEmail, listSavedEmails, type SavedEmail, updateSavedEmail } from "@holdfast/core/versions";
import { z } from "zod";
import { editorProcedure, router, viewerProcedure } from "../init";
import { id } from "./common";

/**
 * Saved emails (Automations -> Saved emails, and the send step's "Use a saved email"): members read them; editors and
 * owners create, change and delete them, as they edit automations. Scoped by `ctx.org.id`; a saved email of another
 * organisation is "not found". Sizes as a send step's own fields (versions/kinds/send_email.ts).
 */
const savedEmailId = z.object({ savedEmailId: id("etp") });
export const savedEmailContent = z.object({
  name: z.string().trim().min(1, "give the saved email a name").max(100, "keep the name under 100 characters"),
  subject: z.string().min(1, "write a subject").max(1_000, "keep the subject under 1,000 characters"),
  text: z.string().min(1, "write the message").max(100_000, "keep the message under 100,000 characters"),
  html: z.string().max(200_000, "keep the HTML message under 200,000 characters").nullable(),
});

/** What the page and the picker show of one saved email (who saved it, not their session or account). */
const shown = (s: SavedEmail) => ({
  id: s.id,
  name: s.name,
  subject: s.subject,
  text: s.text,
  html: s.html,
  updatedAt: s.updatedAt,
  updatedBy: s.updatedBy.replace(/^user:/, ""),
  variables: s.check.variables,
  notes: s.check.notes,
});

export const savedEmails = router({
  list: viewerProcedure.query(async ({ ctx }) => (await listSavedEmails(ctx.db, ctx.org.id)).map(shown)),
  get: viewerProcedure.input(savedEmailId).query(async ({ ctx, input }) => shown(await getSavedEmail(ctx.db, ctx.org.id, input.savedEmailId))),
  create: editorProcedure.input(savedEmailContent).mutation(async ({ ctx, input }) => {
    const { saved, repeated } = await createSavedEmail(ctx.db, ctx.org.id, input, `user:${ctx.user.email}`);
    return { saved: shown(saved), message: repeated ? `"${saved.name}" was already saved.` : `Saved "${saved.name}".` };
  }),
  /** `readAt`: the saved email's updatedAt as the page read it; a change over a newer one is refused in words. */
  update: editorProcedure.input(savedEmailId.extend({ readAt: z.date(), content: savedEmailContent })).mutation(async ({ ctx, input }) => {
    const saved = await updateSavedEmail(ctx.db, ctx.org.id, input.savedEmailId, input.readAt, input.content, `user:${ctx.user.email}`);
    return { saved: shown(saved), message: `Saved "${saved.name}". Steps filled from it before keep their own copy.` };
  }),
  remove: editorProcedure.input(savedEmailId).mutation(async ({ ctx, input }) => {
    const deleted = await deleteSavedEmail(ctx.db, ctx.org.id, input.savedEmailId);
    return { deleted, message: deleted ? "Deleted. Steps filled from it keep their own copy." : "It was already deleted." };
  }),
});

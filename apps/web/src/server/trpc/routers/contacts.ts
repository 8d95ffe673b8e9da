import { contactsSearch } from "@holdfast/core/store";
import { isValidZone } from "@holdfast/core/versions";
import { upsertContact } from "@holdfast/core/run";
import { z } from "zod";
import { editorProcedure, router, viewerProcedure } from "../init";
import { email } from "./common";

/**
 * The organisation's contacts: search by email, add one or set its consent and zone. Editors may add contacts; what a
 * role may change of an existing one (withdrawn consent, its zone) is core's rule (run/contacts/rules.ts).
 */
export const contacts = router({
  list: viewerProcedure.input(z.object({ query: z.string().max(320).default("") })).query(({ ctx, input }) => contactsSearch(ctx.db, ctx.org.id, input.query)),
  upsert: editorProcedure
    .input(z.object({ email, timeZone: z.string().refine(isValidZone, "not an IANA time zone").nullable(), consent: z.enum(["granted", "unknown", "withdrawn"]) }))
    .mutation(async ({ ctx, input }) => {
      // A changed zone moves the contact's pending waits (with their old and new instants on each run's timeline).
      const { id } = await upsertContact(ctx.db, { role: ctx.org.role, by: `user:${ctx.user.email}` }, { orgId: ctx.org.id, ...input });
      return { id };
    }),
});

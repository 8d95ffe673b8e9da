import { contactsSearch, contactsUpsertConsent, isValidZone, setContactZone } from "@holdfast/core";
import { z } from "zod";
import { editorProcedure, router, viewerProcedure } from "../init";
import { email } from "./common";

/** The organisation's contacts: search by email, add one or set its consent and zone. */
export const contacts = router({
  list: viewerProcedure.input(z.object({ query: z.string().max(320).default("") })).query(({ ctx, input }) => contactsSearch(ctx.db, ctx.org.id, input.query)),
  upsert: editorProcedure
    .input(z.object({ email, timeZone: z.string().refine(isValidZone, "not an IANA time zone").nullable(), consent: z.enum(["granted", "unknown", "withdrawn"]) }))
    .mutation(async ({ ctx, input }) => {
      const id = await contactsUpsertConsent(ctx.db, { orgId: ctx.org.id, email: input.email, timeZone: input.timeZone, consent: input.consent });
      // A changed zone moves the contact's pending waits (with their old and new instants on each run's timeline).
      if (id && input.timeZone !== null) await setContactZone(ctx.db, ctx.org.id, id, input.timeZone, `user:${ctx.user.email}`);
      return { id };
    }),
});

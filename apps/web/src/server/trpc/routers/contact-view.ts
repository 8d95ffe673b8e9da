import { contactsDetail, contactsEraseCount, contactsRuns } from "@holdfast/core/store";
import { isValidZone } from "@holdfast/core/versions";
import { attributeKeyPattern, eraseContact, setContactAttributesAs, setContactZoneAs } from "@holdfast/core/run";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { graphs } from "../../graphs";
import { editorProcedure, ownerProcedure, router, viewerProcedure } from "../init";

/**
 * Settings -> Contacts -> one contact: consent, suppression, time zone and its runs; a zone change recomputes the
 * contact's pending waits (run/timers/contact-zone.ts); erase shows the runs it would cancel first, then erases only when the
 * owner confirmed that count. Members read; owners erase; who may change the zone is core's rule (run/contacts/rules.ts:
 * owners), the same as for contacts.upsert. Scoped by `ctx.org.id`.
 */
const contactId = z.object({ contactId: z.string().regex(/^ctc_[0-9a-f]{32}$/, "not a contact id") });

async function own(db: Parameters<typeof contactsDetail>[0], orgId: string, id: string) {
  const c = await contactsDetail(db, orgId, id);
  if (!c) throw new TRPCError({ code: "NOT_FOUND", message: "contact not found: it may have been erased; search again" });
  return c;
}

export const contactView = router({
  get: viewerProcedure.input(contactId).query(async ({ ctx, input }) => {
    const contact = await own(ctx.db, ctx.org.id, input.contactId);
    return { contact, runs: await contactsRuns(ctx.db, ctx.org.id, input.contactId) };
  }),
  setZone: editorProcedure
    .input(contactId.extend({ zone: z.string().trim().max(100).refine((z) => z === "" || isValidZone(z), "not a time zone: use a name such as Europe/Berlin") }))
    .mutation(async ({ ctx, input }) => {
      await own(ctx.db, ctx.org.id, input.contactId);
      const r = await setContactZoneAs(ctx.db, { role: ctx.org.role, by: `user:${ctx.user.email}` }, ctx.org.id, input.contactId, input.zone || null);
      const waits = r.moved === 1 ? "1 waiting run moved" : `${r.moved} waiting runs moved`;
      return {
        ...r,
        message: r.changed ? `Time zone ${r.zone ?? "cleared"}; ${waits} to the new zone (each run's timeline shows the old and new time).` : "The time zone was already that; nothing changed.",
      };
    }),
  /**
   * The contact's name, company and kept fields (the ones its automations' triggers keep), as typed: an empty value
   * removes one. Editors and owners (run/contacts/rules.ts); a repeated save says nothing changed.
   */
  setAttributes: editorProcedure
    .input(
      contactId.extend({
        attributes: z
          .record(
            z.string().regex(attributeKeyPattern, "a field name uses letters, digits, _ and - (at most 64)"),
            z.string().max(500, "keep each value under 500 characters"),
          )
          .refine((a) => Object.keys(a).length <= 50, "a contact keeps at most 50 fields"),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      await own(ctx.db, ctx.org.id, input.contactId);
      const r = await setContactAttributesAs(ctx.db, { role: ctx.org.role, by: `user:${ctx.user.email}` }, ctx.org.id, input.contactId, input.attributes);
      return { ...r, message: r.changed ? "Saved: later emails use these (a new delivery with other values replaces them)." : "Nothing changed: the contact already had these." };
    }),
  /** What erasing would do, counted now: running runs cancelled, all runs scrubbed. */
  eraseCount: ownerProcedure.input(contactId).query(async ({ ctx, input }) => {
    const c = await own(ctx.db, ctx.org.id, input.contactId);
    return { ...(await contactsEraseCount(ctx.db, ctx.org.id, c.email)), erased: c.erased };
  }),
  erase: ownerProcedure.input(contactId.extend({ confirmRunning: z.number().int().min(0) })).mutation(async ({ ctx, input }) => {
    const c = await own(ctx.db, ctx.org.id, input.contactId);
    const count = await contactsEraseCount(ctx.db, ctx.org.id, c.email);
    if (count.running !== input.confirmRunning) {
      throw new TRPCError({
        code: "CONFLICT",
        message: `${count.running} runs would be cancelled now, not ${input.confirmRunning}: check the count again and confirm.`,
      });
    }
    const out = await eraseContact(ctx.db, graphs, ctx.org.id, c.email, `user:${ctx.user.email}`);
    const stopped = out.cancelled + out.cancelRequested;
    return {
      ...out,
      message: c.erased
        ? `Already erased; ${out.scrubbed} runs checked again.`
        : `Erased: ${stopped} run${stopped === 1 ? "" : "s"} cancelled${out.cancelRequested ? ` (${out.cancelRequested} stop when their step in flight settles)` : ""}, ${out.scrubbed} scrubbed; only a hash of the address is kept.`,
    };
  }),
});

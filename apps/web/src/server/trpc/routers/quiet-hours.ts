import { quietHoursSentence, quietOverrideSchema, quietWindowSchema } from "@holdfast/core/people";
import { automationQuietHours, orgQuietHours, setAutomationQuietHours, setOrgQuietHours } from "@holdfast/core/run";
import { z } from "zod";
import { ownerProcedure, router, viewerProcedure } from "../init";
import { automationId, ownAutomation } from "./common";

/**
 * Quiet hours (issue 44): the organisation's window in Settings and an automation's override on its page. Members
 * read; owners change (a window decides when every email of the organisation may go out: an editor's automation
 * does not turn it off). Inputs are the zod schemas core sends by, so what is saved is what the sender reads.
 * Scoped by `ctx.org.id`; another organisation's automation is "not found".
 */
export const quietHours = router({
  org: viewerProcedure.query(({ ctx }) => orgQuietHours(ctx.db, ctx.org.id)),
  setOrg: ownerProcedure
    .input(z.object({ window: quietWindowSchema.nullable() }))
    .mutation(({ ctx, input }) => setOrgQuietHours(ctx.db, ctx.org.id, input.window, `user:${ctx.user.email}`)),
  /** The sentence a window would read as, for the form's preview; a window that does not parse says what is wrong. */
  preview: viewerProcedure.input(z.object({ window: z.unknown() })).query(({ input }) => {
    if (input.window === null) return { ok: true as const, sentence: quietHoursSentence(null) };
    const parsed = quietWindowSchema.safeParse(input.window);
    return parsed.success ? { ok: true as const, sentence: quietHoursSentence(parsed.data) } : { ok: false as const, sentence: capital(parsed.error.issues[0]?.message ?? "not a window") };
  }),
  automation: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    return { ...(await automationQuietHours(ctx.db, ctx.org.id, input.automationId)), canChange: ctx.org.role === "owner" };
  }),
  setAutomation: ownerProcedure.input(automationId.extend({ override: quietOverrideSchema })).mutation(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    return setAutomationQuietHours(ctx.db, ctx.org.id, input.automationId, input.override);
  }),
});

const capital = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;

import { automationsSetTrackOpens, automationsTrackOpens } from "@holdfast/core/store";
import { z } from "zod";
import { stepEmailCounts } from "../../step-email-counts";
import { editorProcedure, router, viewerProcedure } from "../init";
import { automationId, ownAutomation } from "./common";

/**
 * What became of an automation's emails (issue 43): per send step, how many messages were sent and reached each
 * outcome (all versions, all time: the journey counts the canvas reads), and the automation's open tracking (off by
 * default). Scoped by `ctx.org.id`; another organisation's automation is "not found".
 */
export const emails = router({
  summary: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    const [trackOpens, steps] = await Promise.all([
      automationsTrackOpens(ctx.db, ctx.org.id, input.automationId),
      stepEmailCounts(ctx.db, ctx.org.id, input.automationId),
    ]);
    return { trackOpens, steps };
  }),
  setTrackOpens: editorProcedure.input(automationId.extend({ on: z.boolean() })).mutation(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    await automationsSetTrackOpens(ctx.db, ctx.org.id, input.automationId, input.on);
    return { trackOpens: input.on };
  }),
});

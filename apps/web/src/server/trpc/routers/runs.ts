import { fireWaitRoleWords, fireWaitWords, mayFireWaits } from "@holdfast/core/run";
import { fireWaitNow } from "@holdfast/core/run";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { graphs } from "../../graphs";
import { router, viewerProcedure } from "../init";
import { id } from "./common";

/**
 * Acting on one run. Scoped by `ctx.org.id` (init.ts): a run of another organisation is "not found". Who may do what
 * is core's rule (mayFireWaits), the same the run page shows its controls by.
 */
export const fireWaitInput = z.object({
  runId: id("run"),
  /** The waiting step (the run page's form), or its node id (the latest visit); neither: the run's one waiting wait. */
  stepId: id("stp").optional(),
  nodeId: z.string().min(1).max(100).optional(),
  reason: z.string().trim().min(1, "say why the wait is fired early").max(500, "keep the reason under 500 characters"),
});

export const runs = router({
  /** "Fire this wait now": the wait ends as if its time had come, through the sweeper's firing; once however many calls. */
  fireWait: viewerProcedure.input(fireWaitInput).mutation(async ({ ctx, input }) => {
    if (!mayFireWaits(ctx.org.role)) throw new TRPCError({ code: "FORBIDDEN", message: `${fireWaitRoleWords} You are ${/^[aeiou]/.test(ctx.org.role) ? "an" : "a"} ${ctx.org.role}.` });
    const out = await fireWaitNow(ctx.db, graphs, { orgId: ctx.org.id, runId: input.runId, stepId: input.stepId, nodeId: input.nodeId, by: `user:${ctx.user.email}`, reason: input.reason });
    return { ...out, words: fireWaitWords(out) };
  }),
});

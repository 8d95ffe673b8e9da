import { decideTestApproval, playTestRun, simulateTestReply, skipTestWait, testRunState } from "@holdfast/core/run";
import { z } from "zod";
import { graphs } from "../../graphs";
import { editorProcedure, router, viewerProcedure } from "../init";
import { id } from "./common";

/**
 * A test run's page (issue 40): its virtual clock and what waits for the tester, and the tester's moves: skip a wait
 * to its instant, decide an approval as one of its approvers, reply or let a reply wait pass, or play to the end.
 * Owners and editors act (they start test runs); anyone in the organisation may look. Only test runs: core refuses
 * a real run in words (its waits are fired with "Fire this wait now", by owners).
 */
const run = z.object({ runId: id("run") });

export const testRuns = router({
  state: viewerProcedure.input(run).query(({ ctx, input }) => testRunState(ctx.db, ctx.org.id, input.runId)),
  skip: editorProcedure
    .input(run.extend({ stepId: id("stp") }))
    .mutation(({ ctx, input }) => skipTestWait(ctx.db, graphs, { orgId: ctx.org.id, runId: input.runId, stepId: input.stepId, by: `user:${ctx.user.email}` })),
  decide: editorProcedure
    .input(run.extend({ approvalId: id("apr"), decision: z.enum(["approved", "rejected"]), asUserId: id("usr") }))
    .mutation(({ ctx, input }) => decideTestApproval(ctx.db, { orgId: ctx.org.id, ...input, by: `user:${ctx.user.email}` })),
  reply: editorProcedure
    .input(run.extend({ stepId: id("stp"), text: z.string().trim().min(1, "write the reply, or choose No reply").max(10_000).nullable() }))
    .mutation(({ ctx, input }) =>
      simulateTestReply(ctx.db, graphs, { orgId: ctx.org.id, orgSlug: ctx.org.slug, runId: input.runId, stepId: input.stepId, text: input.text, by: `user:${ctx.user.email}` }),
    ),
  play: editorProcedure
    .input(run)
    .mutation(({ ctx, input }) => playTestRun(ctx.db, graphs, { orgId: ctx.org.id, orgSlug: ctx.org.slug, runId: input.runId, by: `user:${ctx.user.email}`, budgetMs: 45_000 })),
});

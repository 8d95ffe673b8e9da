import { type GoalCredentialKind, goalPath, goalSettings, journeyCounts, setGoal } from "@holdfast/core/run";
import { automationsTriggerOf } from "@holdfast/core/store";
import { revokePreviousTriggerCredentials, rotateTriggerCredential } from "@holdfast/core/versions";
import type { Db } from "@holdfast/db";
import { goals as goalNames } from "@holdfast/core/base";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { env } from "../../../env";
import { editorProcedure, router, viewerProcedure } from "../init";
import { automationId, ownAutomation } from "./common";

const goal = z.enum(goalNames as [string, ...string[]]).transform((g) => g as (typeof goalNames)[number]);

/** The page names the goal URL's credentials as the start trigger's (one component shows both); core has its own kinds. */
const kindInput = z.enum(["signing_secret", "url_token"]);
const goalKind = { signing_secret: "goal_signing_secret", url_token: "goal_url_token" } as const satisfies Record<z.infer<typeof kindInput>, GoalCredentialKind>;
const pageKind = (k: GoalCredentialKind): z.infer<typeof kindInput> => (k === "goal_signing_secret" ? "signing_secret" : "url_token");

/** The goal URL's credentials exist only once the goal is a goal event: before that there is nothing to rotate. */
async function goalUrlOf(db: Db, orgId: string, automationId: string): Promise<void> {
  await ownAutomation(db, orgId, automationId);
  const settings = await goalSettings(db, orgId, automationId);
  if (settings.goal !== "event" || settings.signingSecret === null) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: "This automation has no goal URL: set its goal to a goal event first." });
  }
}

/**
 * An automation's goal (the contact replied, clicked, or a goal event came: the journey's runs for that contact end
 * as converted), its goal URL, and the conversion rate per version. Scoped by `ctx.org.id` (init.ts); an automation
 * of another organisation is "not found". Owners and editors set the goal and see and rotate the goal URL's credentials.
 */
export const goals = router({
  get: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    const [settings, trigger, versions] = await Promise.all([
      goalSettings(ctx.db, ctx.org.id, input.automationId),
      automationsTriggerOf(ctx.db, ctx.org.id, input.automationId),
      // Runs started and converted per version, all time: the journey counts' run-level buckets (exact, O(versions)).
      journeyCounts(ctx.db, { orgId: ctx.org.id, automationId: input.automationId, versionId: null, window: "all" }).then((c) => c.versions),
    ]);
    if (!trigger) throw new TRPCError({ code: "NOT_FOUND", message: "automation not found" });
    const mayManage = ctx.org.role === "owner" || ctx.org.role === "editor";
    const base = env.HOLDFAST_PUBLIC_URL.replace(/\/$/, "");
    const hasUrl = settings.goal === "event" && settings.signingSecret !== null;
    return {
      goal: settings.goal,
      mode: settings.mode,
      url: hasUrl ? `${base}${goalPath(ctx.org.slug, trigger.slug, settings.mode, mayManage ? settings.urlToken : null)}` : null,
      credential:
        hasUrl && mayManage
          ? { signingSecret: settings.signingSecret, urlToken: settings.urlToken, previous: settings.previous.map((p) => ({ kind: pageKind(p.kind), expiresAt: p.expiresAt })) }
          : null,
      versions: versions.map((v) => ({ version: v.version, started: v.started, converted: v.converted })),
    };
  }),
  set: editorProcedure.input(automationId.extend({ goal: goal.nullable() })).mutation(async ({ ctx, input }) => {
    await ownAutomation(ctx.db, ctx.org.id, input.automationId);
    await setGoal(ctx.db, ctx.org.id, input.automationId, input.goal);
    return { goal: input.goal };
  }),
  /** A new goal secret or goal URL token; the previous one is still accepted for 24 hours, as the start trigger's. */
  rotate: editorProcedure.input(automationId.extend({ kind: kindInput })).mutation(async ({ ctx, input }) => {
    await goalUrlOf(ctx.db, ctx.org.id, input.automationId);
    await rotateTriggerCredential(ctx.db, ctx.org.id, input.automationId, goalKind[input.kind]);
    return { rotated: input.kind };
  }),
  /** The previous goal secret or token stops working now (it leaked); a repeat revokes nothing and says so (0). */
  revokePrevious: editorProcedure.input(automationId.extend({ kind: kindInput })).mutation(async ({ ctx, input }) => {
    await goalUrlOf(ctx.db, ctx.org.id, input.automationId);
    return { revoked: await revokePreviousTriggerCredentials(ctx.db, ctx.org.id, input.automationId, goalKind[input.kind]) };
  }),
});

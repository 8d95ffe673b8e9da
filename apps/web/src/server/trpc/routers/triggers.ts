import { automationVersionsHasPublished, automationsSampleInput, automationsSetSampleFromDelivery, automationsTriggerOf, triggerDeliveriesList } from "@holdfast/core/store";
import { revokePreviousTriggerCredentials, rotateTriggerCredential, setTriggerAuth, triggerPath, triggerSettings } from "@holdfast/core/versions";
import { testScript, testRunSample, startRun } from "@holdfast/core/run";
import type { Db } from "@holdfast/db";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { env } from "../../../env";
import { editorProcedure, router, viewerProcedure } from "../init";
import { automationId, id } from "./common";

/** A Test run's choices: each simulated call's answer, whether the model is called, the script for Play to the end. */
const testRunOptions = z.object({
  script: testScript.optional(),
  sendToMe: z.boolean().default(false),
  /** "Start the run's clock at": an instant from now to five years ahead. */
  clockStartsAt: z.coerce
    .date()
    .refine((d) => d.getTime() < Date.now() + 5 * 365 * 86_400_000, "start the run's clock at most five years from now")
    .optional(),
});

/**
 * The trigger step's panel: the trigger's URL and credential, its recent deliveries, the sample payload the
 * variable picker reads `input.*` from, and Test run. Every procedure is scoped by `ctx.org.id` (init.ts resolves
 * it from the session's membership of `orgSlug`); an id of another organisation is "not found".
 */
const triggerMode = z.enum(["signed", "url_token"]);

/** How a delivery's start key tells it apart: the sender's delivery id, the payload's id field, or its content. */
function sameByOf(startKey: string | null): { sameBy: "webhook_id" | "id_field" | "identical" | "new" | null; sameValue: string | null } {
  if (!startKey) return { sameBy: null, sameValue: null };
  if (startKey.startsWith("wh:")) return { sameBy: "webhook_id", sameValue: startKey.slice(3) };
  if (startKey.startsWith("ev:")) return { sameBy: "id_field", sameValue: startKey.slice(3) };
  if (/^sha256:[0-9a-f]{64}:new:/.test(startKey)) return { sameBy: "new", sameValue: null };
  if (startKey.startsWith("sha256:")) return { sameBy: "identical", sameValue: null };
  return { sameBy: null, sameValue: null };
}

/** Rows the panel lists (the table keeps about 50 per automation). */
const deliveriesShown = 20;

async function automationOf(db: Db, orgId: string, automationId: string): Promise<{ slug: string; mode: "signed" | "url_token" }> {
  const a = await automationsTriggerOf(db, orgId, automationId);
  if (!a) throw new TRPCError({ code: "NOT_FOUND", message: "automation not found" });
  return a;
}

async function hasPublishedVersion(db: Db, orgId: string, automationId: string): Promise<boolean> {
  return automationVersionsHasPublished(db, orgId, automationId);
}

/**
 * Owners and editors see the signing secret and the URL token (they configure the sender) and may start test
 * runs; viewers and approvers see the mode, the base URL, the deliveries and the sample.
 */
export const triggers = router({
  get: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    const a = await automationOf(ctx.db, ctx.org.id, input.automationId);
    const base = env.HOLDFAST_PUBLIC_URL.replace(/\/$/, "");
    const mayManage = ctx.org.role === "owner" || ctx.org.role === "editor";
    if (!mayManage) return { mode: a.mode, url: `${base}${triggerPath(ctx.org.slug, a.slug, "signed", "")}`, credential: null };
    const settings = await triggerSettings(ctx.db, ctx.org.id, input.automationId, a.mode);
    return {
      mode: a.mode,
      url: `${base}${triggerPath(ctx.org.slug, a.slug, a.mode, settings.urlToken)}`,
      credential: { signingSecret: settings.signingSecret, urlToken: settings.urlToken, previous: settings.previous },
    };
  }),
  setMode: editorProcedure.input(automationId.extend({ mode: triggerMode })).mutation(async ({ ctx, input }) => {
    await automationOf(ctx.db, ctx.org.id, input.automationId);
    await setTriggerAuth(ctx.db, ctx.org.id, input.automationId, input.mode);
    return { mode: input.mode };
  }),
  /** A new secret or token; the previous one is still accepted for 24 hours so senders can be updated. */
  rotate: editorProcedure
    .input(automationId.extend({ kind: z.enum(["signing_secret", "url_token"]) }))
    .mutation(async ({ ctx, input }) => {
      await automationOf(ctx.db, ctx.org.id, input.automationId);
      await rotateTriggerCredential(ctx.db, ctx.org.id, input.automationId, input.kind);
      return { rotated: input.kind };
    }),
  /** The previous secret or token stops working now instead of at the end of its 24 hours (it leaked). */
  revokePrevious: editorProcedure
    .input(automationId.extend({ kind: z.enum(["signing_secret", "url_token"]) }))
    .mutation(async ({ ctx, input }) => {
      await automationOf(ctx.db, ctx.org.id, input.automationId);
      return { revoked: await revokePreviousTriggerCredentials(ctx.db, ctx.org.id, input.automationId, input.kind) };
    }),
  /** The newest deliveries to the trigger's URL: accepted, repeated (duplicate) and refused with the reason. */
  deliveries: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    await automationOf(ctx.db, ctx.org.id, input.automationId);
    const rows = await triggerDeliveriesList(ctx.db, ctx.org.id, input.automationId, deliveriesShown);
    // The start key without its automation prefix (wh:<webhook-id>, ev:<field>, sha256:...), shown under Details
    // only; the page says in words how a repeat was recognised (`sameBy`, `sameValue`).
    return rows.map((r) => {
      const startKey = r.startKey?.replace(/^aut_[0-9a-f]{32}:/, "") ?? null;
      return { ...r, startKey, ...sameByOf(startKey) };
    });
  }),
  /** The sample payload (null: none yet). */
  sample: viewerProcedure.input(automationId).query(async ({ ctx, input }) => {
    const found = await automationsSampleInput(ctx.db, ctx.org.id, input.automationId);
    if (!found.found) throw new TRPCError({ code: "NOT_FOUND", message: "automation not found" });
    return found.sample;
  }),
  /** An accepted delivery's payload (its run's input) becomes the sample. */
  useAsSample: editorProcedure.input(z.object({ deliveryId: id("dlv") })).mutation(async ({ ctx, input }) => {
    const set = await automationsSetSampleFromDelivery(ctx.db, ctx.org.id, input.deliveryId);
    if (!set) throw new TRPCError({ code: "NOT_FOUND", message: "no accepted delivery with this id (only an accepted delivery has a payload to use)" });
    return set;
  }),
  /**
   * Starts a run of the newest published version with the sample as its input, through the normal start (a fresh
   * start key, so never a duplicate), marked as a test and started by this person on its timeline. Its effects are
   * simulated (core run/connectors/simulate.ts): nobody receives anything unless "Send to me" sends the tester a copy.
   */
  testRun: editorProcedure.input(automationId.extend(testRunOptions.shape)).mutation(async ({ ctx, input }) => {
    const a = await automationOf(ctx.db, ctx.org.id, input.automationId);
    if (!(await hasPublishedVersion(ctx.db, ctx.org.id, input.automationId))) {
      throw new TRPCError({ code: "PRECONDITION_FAILED", message: "Publish first: a test run starts the newest published version." });
    }
    // The delivered sample over the published trigger's declared fields and typed sample: no delivery needed first.
    const sample = await testRunSample(ctx.db, ctx.org.id, input.automationId);
    if (!sample) {
      throw new TRPCError({
        code: "PRECONDITION_FAILED",
        message: "No sample yet: send one delivery to the trigger's URL (its payload becomes the sample), or declare the fields the form sends on the trigger, with examples, and publish.",
      });
    }
    const started = await startRun(ctx.db, {
      orgSlug: ctx.org.slug,
      automationSlug: a.slug,
      rawBody: JSON.stringify(sample),
      body: sample,
      headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
      via: "test",
      auth: { kind: "operator" },
      // Every effect simulated as the script says; "Send to me" sends only to the signed-in tester's own address.
      test: { by: `user:${ctx.user.email}`, script: testScript.parse(input.script ?? {}), sendTo: input.sendToMe ? ctx.user.email : null, clockStartsAt: input.clockStartsAt ?? null },
    });
    return { runId: started.runId, version: started.version };
  }),
});

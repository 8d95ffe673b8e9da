import { z } from "zod";

/**
 * What a test run's simulated effects answer with, chosen by the tester (the Test run form, or "Play to the end").
 * Nothing here reaches a provider: a simulated call makes no connection at all (run/connectors/simulate.ts).
 * - calls: by step id, the answer a simulated `http_request` or `crm_upsert` gets (default: 200 with an empty body),
 *   so error paths can be tried (a 500 takes the retry and fail path, a 401 the reconnect path);
 * - modelCalls: true (default) calls the model for real (trying the wording is the point; counted against the model
 *   budget), false returns a canned draft;
 * - approvals / replies: by step id, what "Play to the end" decides (default: approve; a reply with `replyText`).
 */
export const callAnswer = z.object({
  status: z.number().int().min(100).max(599),
  body: z.unknown().optional(),
});
export type CallAnswer = z.infer<typeof callAnswer>;

const stepId = z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,62}$/);

export const testScript = z
  .object({
    calls: z.record(stepId, callAnswer).default({}),
    modelCalls: z.boolean().default(true),
    approvals: z.record(stepId, z.enum(["approve", "reject"])).default({}),
    replies: z.record(stepId, z.union([z.object({ text: z.string().min(1).max(10_000) }), z.literal("none")])).default({}),
  })
  .strict();
export type TestScript = z.infer<typeof testScript>;

/** The answer a simulated call of `nodeId` gets: the tester's, else a plain success. */
export function answerFor(script: TestScript, nodeId: string): CallAnswer {
  return script.calls[nodeId] ?? { status: 200, body: {} };
}

/** A canned draft for "no model calls": plain, and saying what it is, so nobody mistakes it for the model's. */
export const cannedDraft = {
  text: "This is a canned draft: the test run was set not to call the model. Tick \"Call the model\" to see the real wording.",
};

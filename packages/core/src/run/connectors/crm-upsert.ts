import { crmConnectionConfig } from "../../versions/connection-kinds/crm";
import { performHttpRequest } from "../../providers/effects/http-request";
import type { StepOutcome } from "../../base/outcome/outcome";
import { TemplateError } from "../../base/templates/render";
import { crmRecordsUrl, crmUpsertCall, renderCrmUpsert } from "./calls";
import { type Connector, takenOver } from "./connector";


/**
 * crm_upsert: `PUT /objects/{object}/records/{externalId}` where the external id is the node's match key as rendered
 * for this run (the contact's email by default), so runs about one person update one record. The effect key is the
 * call's `Idempotency-Key`: a repeat of this run's call is answered by the CRM, not applied again (a same-key re-send
 * after a crash never overwrites a later run's write). Reconcile asks the CRM what the key wrote:
 * `GET /objects/{object}/records?idempotencyKey=`. Field values are templates (plain text).
 */
export const crmUpsertConnector: Connector<"crm_upsert"> = {
  kind: "crm_upsert",
  connection: { kind: "crm", name: (node) => node.config.connection },
  providerIdempotent: () => true,
  async perform(ctx, key, begin): Promise<StepOutcome> {
    const crm = crmConnectionConfig.safeParse(ctx.connection?.config);
    if (!crm.success) return { kind: "fail", error: { code: "bad_connection", message: `connection "${ctx.node.config.connection}" is not a CRM connection`, permanent: true, notPerformed: true } };
    const { matchKey, object } = ctx.node.config;
    const context = await ctx.templates();
    if (context.contact === null && /\{\{\s*contact\./.test(matchKey)) {
      const message = `this run has no contact, so no ${object} record can be matched by ${matchKey}: set "Match records by" to a value of the payload, such as {{input.customer_id}}, or send the contact's email`;
      return { kind: "fail", error: { code: "no_match_key", message, permanent: true, notPerformed: true } };
    }
    let rendered: { externalId: string; fields: Record<string, string> };
    try {
      rendered = renderCrmUpsert(ctx.node.config, context);
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { kind: "fail", error: { code: "template_error", message: error.message, permanent: true, notPerformed: true } };
    }
    const { externalId } = rendered;
    if (externalId === "") {
      const message = `"Match records by" (${matchKey}) is empty for this run, so no ${object} record can be named: give the payload that value or match by another one`;
      return { kind: "fail", error: { code: "no_match_key", message, permanent: true, notPerformed: true } };
    }
    if (!(await begin())) return takenOver(key);
    const call = crmUpsertCall(crm.data.baseUrl, object, rendered);
    const outcome = await performHttpRequest({
      provider: "crm",
      config: {
        url: call.url,
        method: call.method,
        headers: ctx.connection?.password ? { Authorization: `Bearer ${ctx.connection.password}` } : {},
        body: call.body,
        sendInput: false,
        timeoutMs: crm.data.timeoutMs,
        idempotent: true,
      },
      idempotencyKey: key,
      runId: ctx.step.runId,
      input: null,
      signal: ctx.signal,
      // A test run: the record's write is recorded and answered as the tester chose; the CRM is not called.
      ...(ctx.simulation ? { simulated: ctx.simulation.call(ctx.node.id, ctx.connection?.password ? [ctx.connection.password] : []) } : {}),
    });
    return outcome.kind === "done" ? { kind: "done", output: (outcome.output as { body: unknown }).body } : outcome;
  },
  async reconcile(ctx, key): Promise<unknown | null> {
    const crm = crmConnectionConfig.parse(ctx.connection?.config);
    const found = await performHttpRequest({
      provider: "crm",
      config: {
        url: `${crmRecordsUrl(crm.baseUrl, ctx.node.config.object)}?idempotencyKey=${encodeURIComponent(key)}`,
        method: "GET",
        headers: ctx.connection?.password ? { Authorization: `Bearer ${ctx.connection.password}` } : {},
        sendInput: false,
        timeoutMs: crm.timeoutMs,
        idempotent: true,
      },
      idempotencyKey: key,
      runId: ctx.step.runId,
      input: null,
      signal: ctx.signal,
    });
    if (found.kind !== "done") return null; // cannot tell: the ledger falls back to a same-key re-send
    const body = (found.output as { body: { records?: unknown[] } }).body;
    return body.records?.[0] ?? null;
  },
};

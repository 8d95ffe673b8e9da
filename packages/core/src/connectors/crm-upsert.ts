import { crmConnectionConfig } from "../connections/kinds/crm";
import { performHttpRequest } from "../effects/http-request";
import type { StepOutcome } from "../steps/retry";
import { renderTemplate, TemplateError } from "../templates/render";
import { type Connector, takenOver } from "./connector";

const recordUrl = (baseUrl: string, object: string, externalId: string) =>
  `${baseUrl.replace(/\/$/, "")}/objects/${encodeURIComponent(object)}/records/${encodeURIComponent(externalId)}`;

/**
 * crm_upsert: `PUT /objects/{object}/records/{externalId}` with the effect key as the external id, so a repeat
 * updates the record it created instead of adding one; reconcile is `GET /objects/{object}/records?externalId=`.
 * Field values are templates (plain text).
 */
export const crmUpsertConnector: Connector<"crm_upsert"> = {
  kind: "crm_upsert",
  connection: { kind: "crm", name: (node) => node.config.connection },
  providerIdempotent: () => true,
  async perform(ctx, key, begin): Promise<StepOutcome> {
    const crm = crmConnectionConfig.safeParse(ctx.connection?.config);
    if (!crm.success) return { kind: "fail", error: { code: "bad_connection", message: `connection "${ctx.node.config.connection}" is not a CRM connection`, permanent: true, notPerformed: true } };
    let fields: Record<string, string>;
    try {
      const context = await ctx.templates();
      fields = Object.fromEntries(Object.entries(ctx.node.config.fields).map(([name, t]) => [name, renderTemplate(t, context, "text")]));
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { kind: "fail", error: { code: "template_error", message: error.message, permanent: true, notPerformed: true } };
    }
    if (!(await begin())) return takenOver(key);
    const outcome = await performHttpRequest({
      config: {
        url: recordUrl(crm.data.baseUrl, ctx.node.config.object, key),
        method: "PUT",
        headers: ctx.connection?.password ? { Authorization: `Bearer ${ctx.connection.password}` } : {},
        body: { externalId: key, fields },
        sendInput: false,
        timeoutMs: crm.data.timeoutMs,
        idempotent: true,
      },
      idempotencyKey: key,
      runId: ctx.step.runId,
      input: null,
      signal: ctx.signal,
    });
    return outcome.kind === "done" ? { kind: "done", output: (outcome.output as { body: unknown }).body } : outcome;
  },
  async reconcile(ctx, key): Promise<unknown | null> {
    const crm = crmConnectionConfig.parse(ctx.connection?.config);
    const url = `${crm.baseUrl.replace(/\/$/, "")}/objects/${encodeURIComponent(ctx.node.config.object)}/records?externalId=${encodeURIComponent(key)}`;
    const found = await performHttpRequest({
      config: { url, method: "GET", headers: ctx.connection?.password ? { Authorization: `Bearer ${ctx.connection.password}` } : {}, sendInput: false, timeoutMs: crm.timeoutMs, idempotent: true },
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

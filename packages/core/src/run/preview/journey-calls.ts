import { renderEmail } from "../../people/approvals/email";
import { crmConnectionConfig } from "../../versions/connection-kinds/crm";
import { httpConnectionConfig } from "../../versions/connection-kinds/http";
import { modelConnectionConfig } from "../../versions/connection-kinds/model";
import { chatCompletionsCall, crmUpsertCall, renderCrmUpsert, renderDraftPrompt } from "../connectors/calls";
import { httpRequestBody } from "../../versions/kinds/http_request";
import type { GraphNode } from "../../versions/graph";
import { connectionNamed, type JourneyWalk, type Previewed, rendering, type StepDraft, stopsFor, withMarkers } from "./journey-context";

/**
 * The preview of a step that calls out (an email, a CRM record, a request, a model's draft): what it would send, as
 * its connector would render it, with every secret left out. Nothing is sent.
 */

type NodeOf<K extends GraphNode["kind"]> = Extract<GraphNode, { kind: K }>;

const drafted = "[the text the model drafts]";

export function sendEmailPreview(w: JourneyWalk, node: NodeOf<"send_email">, step: StepDraft): Previewed {
  const c = node.config;
  const email = rendering(() => renderEmail(c, withMarkers(w, step, ["to", c.to], ["subject", c.subject], ["text", c.text], ["html", c.html])));
  const stops = stopsFor(step.missing);
  const contact = w.contact;
  const consent =
    contact?.consent === "withdrawn"
      ? " The contact withdrew consent: it would be skipped."
      : c.requireConsent && contact?.consent !== "granted"
        ? " It needs consent, which this contact has not given: it would be skipped."
        : "";
  return {
    step: {
      ...step,
      words: `Sends this email through "${c.connection}".${consent} Consent and the suppression list are checked when it sends.`,
      ...(stops ? { stops } : {}),
      detail: { kind: "send_email", email, connection: c.connection },
    },
    output: { messageId: "(preview)", to: email?.to ?? "", subject: email?.subject ?? "", text: email?.text ?? "" },
  };
}

export function crmUpsertPreview(w: JourneyWalk, node: NodeOf<"crm_upsert">, step: StepDraft): Previewed {
  const c = node.config;
  const crm = crmConnectionConfig.safeParse(connectionNamed(w, c.connection, "crm")?.config);
  const fields = Object.entries(c.fields).map(([k, v]) => [`fields.${k}`, v] as [string, string]);
  const rendered = rendering(() => renderCrmUpsert(c, withMarkers(w, step, ["matchKey", c.matchKey], ...fields)));
  const call = rendered && crm.success ? crmUpsertCall(crm.data.baseUrl, c.object, rendered) : null;
  const noKey = rendered?.externalId === "" ? `"Match records by" (${c.matchKey}) is empty in this sample, so no record can be named` : undefined;
  const stops = stopsFor(step.missing) ?? noKey;
  return {
    step: {
      ...step,
      words: `Creates or updates the ${c.object} record ${rendered?.externalId ? `"${rendered.externalId}"` : ""} in "${c.connection}"${crm.success ? "" : ` (no CRM connection named "${c.connection}" yet)`}.`,
      assumption: "Assumes the CRM accepts the record.",
      ...(stops ? { stops } : {}),
      detail: {
        kind: "crm_upsert",
        connection: c.connection,
        request: call ? { method: call.method, url: call.url, headers: { Authorization: "Bearer (the CRM's API token: not shown)" }, body: call.body } : null,
      },
    },
    output: { id: "[the CRM's record id]" },
  };
}

export function httpRequestPreview(w: JourneyWalk, node: NodeOf<"http_request">, step: StepDraft): Previewed {
  const c = node.config;
  const { hasBody, body } = httpRequestBody(c, w.sample.input);
  const http = c.connection ? httpConnectionConfig.safeParse(connectionNamed(w, c.connection, "http")?.config) : null;
  const headers: Record<string, string> = { ...c.headers };
  if (c.connection) headers[http?.success ? http.data.header : "(credential header)"] = `(the secret of "${c.connection}": not shown)`;
  return {
    step: {
      ...step,
      words: `Calls this address once${c.connection ? `, with the credentials of "${c.connection}"` : ""}.`,
      assumption: "Assumes the call answers 200 with an empty body (a preview makes no call).",
      detail: { kind: "http_request", request: { method: c.method, url: c.url, headers, ...(hasBody ? { body } : {}) } },
    },
    output: { status: 200, body: null },
  };
}

export function modelDraftPreview(w: JourneyWalk, node: NodeOf<"model_draft">, step: StepDraft): Previewed {
  const c = node.config;
  const rendered = rendering(() => renderDraftPrompt(c, withMarkers(w, step, ["prompt", c.prompt], ["system", c.system])));
  const model = modelConnectionConfig.safeParse(connectionNamed(w, c.connection, "model")?.config);
  const call = rendered && model.success ? chatCompletionsCall(model.data, c, rendered) : null;
  const stops = stopsFor(step.missing);
  return {
    step: {
      ...step,
      words: `Asks ${model.success ? model.data.model : `the model of "${c.connection}"`} to write, with this prompt. The preview does not ask it.`,
      assumption: `Later steps see the draft as "${drafted}".`,
      ...(stops ? { stops } : {}),
      detail: {
        kind: "model_draft",
        connection: c.connection,
        prompt: rendered?.prompt ?? c.prompt,
        ...(rendered?.system !== undefined ? { system: rendered.system } : {}),
        request: call ? { method: call.method, url: call.url, headers: { Authorization: "Bearer (the API key: not shown)" }, body: call.body } : null,
      },
    },
    output: { text: drafted, model: model.success ? model.data.model : "(model)" },
  };
}

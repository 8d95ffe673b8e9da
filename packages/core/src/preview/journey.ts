import { type EmailParts, renderEmail } from "../approvals/email";
import { crmConnectionConfig } from "../connections/kinds/crm";
import { httpConnectionConfig } from "../connections/kinds/http";
import { modelConnectionConfig } from "../connections/kinds/model";
import { chatCompletionsCall, crmUpsertCall, renderCrmUpsert, renderDraftPrompt } from "../connectors/calls";
import { approversWords } from "../kinds/approval";
import { conditionSentence } from "../kinds/branch";
import { httpRequestBody } from "../kinds/http_request";
import { kindOf } from "../kinds/registry";
import { ruleWords } from "../kinds/wait";
import { durationWords } from "../kinds/words";
import { contactOf } from "../start/contact-of";
import { templateContact } from "../templates/contact";
import { renderTemplate, type TemplateContext, TemplateError, templateReferences } from "../templates/render";
import { zoneFor, zoneSourceWords } from "../timers/plan";
import { type PreviewInstant, previewWait } from "../timers/preview";
import type { StepState } from "../types/steps";
import type { Condition, Graph, GraphNode } from "../versions/graph";
import { readPath } from "../walk/condition";
import { planPreviewTurn, type RunState } from "../walk/plan";

/**
 * The editor's preview: a run of a graph with a sample, walked by the walk itself (walk/plan.ts planPreviewTurn), with every step's
 * settle simulated instead of performed. Each step says what it would do (the email as renderEmail renders it, the
 * request a connector would send, a wait's instants from the timers' own schedule), and every template reference
 * with no value in the sample is named. Pure: no database, no network, no clock (`now` is a parameter).
 */

export interface PreviewSample {
  /** The trigger's payload. */
  input: unknown;
  /** The run's contact (a contact of Settings); absent: the one the payload names, as a start would find it. */
  contact?: { id?: string; email: string; timeZone: string | null; consent?: string; attributes?: Record<string, unknown> } | null;
}

/** What a preview cannot know, and assumes. */
export interface PreviewAssume {
  approval: "approved" | "rejected";
  reply: boolean;
}

/** The organisation's connections as the preview may show them: names, kinds and settings, never secrets. */
export interface PreviewConnection {
  name: string;
  kind: string;
  config: unknown;
}

export interface MissingValue {
  nodeId: string;
  /** The field of the step's settings ("subject", "fields.company"). */
  field: string;
  path: string;
  words: string;
  /** The reference does not exist at all: a real run stops at this step (its template cannot be filled in). */
  stops: boolean;
}

export interface HttpCall {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

export type StepDetail =
  | { kind: "trigger"; contact: { email: string; timeZone: string | null; consent: string } | null }
  | { kind: "send_email"; email: EmailParts | null; connection: string }
  | { kind: "crm_upsert"; request: HttpCall | null; connection: string }
  | { kind: "http_request"; request: HttpCall }
  | { kind: "model_draft"; prompt: string; system?: string; request: HttpCall | null; connection: string }
  | { kind: "wait"; zone: string; zoneWords: string; instants: PreviewInstant[] }
  | { kind: "wait_for_reply"; replyTo: string; deadline: PreviewInstant }
  | { kind: "branch"; condition: string; result: boolean; edge: string; to: string | null; why: string[] }
  | { kind: "approval"; approvers: string; title: string; content: string; email: EmailParts | null; deadline: PreviewInstant }
  | { kind: "end" }
  | { kind: "other" };

export interface StepPreview {
  nodeId: string;
  kind: string;
  /** "✉ Send email" */
  label: string;
  icon: string;
  name: string;
  /** What it would do, in one sentence. */
  words: string;
  /** What the preview assumed where it cannot know (an approval's decision, a reply, a model's answer). */
  assumption?: string;
  /** A real run would stop here, and why. */
  stops?: string;
  missing: MissingValue[];
  detail: StepDetail;
}

export interface JourneyPreview {
  steps: StepPreview[];
  missing: MissingValue[];
  /** How the run would end, in words. */
  outcome: { kind: "completed" | "failed" | "cut"; words: string };
}

/** A walk through a loop is cut after this many steps. */
export const previewStepLimit = 40;

const roots = new Set(["input", "contact", "steps", "run"]);
const defaults: PreviewAssume = { approval: "approved", reply: true };
const drafted = "[the text the model drafts]";

export function previewJourney(
  graph: Graph,
  sample: PreviewSample,
  now: Date,
  options: { assume?: Partial<PreviewAssume>; connections?: PreviewConnection[] } = {},
): JourneyPreview {
  const assume = { ...defaults, ...options.assume };
  const connections = options.connections ?? [];
  const trigger = graph.nodes.find((n): n is Extract<GraphNode, { kind: "trigger" }> => n.kind === "trigger");
  const found: PreviewSample["contact"] = sample.contact === undefined ? (trigger ? contactOf(trigger.config, sample.input) : null) : sample.contact;
  const contact = found
    ? templateContact({ id: found.id ?? "(the contact)", email: found.email, timeZone: found.timeZone, consent: found.consent ?? "unknown", attributes: found.attributes ?? null })
    : null;
  const context: TemplateContext = { input: sample.input, contact, steps: {}, run: { id: "(preview)" } };
  const steps: StepPreview[] = [];
  let clock = now;

  const base = (node: GraphNode): Omit<StepPreview, "words" | "detail"> => {
    const module = kindOf(node.kind);
    return { nodeId: node.id, kind: node.kind, label: module?.label ?? node.kind, icon: module?.icon ?? "?", name: node.name ?? node.id, missing: [] };
  };
  if (trigger) {
    steps.push({
      ...base(trigger),
      words: contact
        ? `Starts with this sample; the contact is ${contact.email}${contact.time_zone ? ` (${contact.time_zone})` : " (no time zone known)"}.`
        : `Starts with this sample; it names no contact (no email address at "${trigger.config.contactEmailField}").`,
      detail: { kind: "trigger", contact: contact ? { email: contact.email, timeZone: contact.time_zone, consent: contact.consent } : null },
    });
  }

  const run: RunState = { id: "(preview)", status: "running", input: sample.input, cancelRequested: false, steps: [], maxSteps: previewStepLimit };
  let outcome: JourneyPreview["outcome"] | null = null;
  for (let turn = 0; turn <= previewStepLimit && !outcome; turn++) {
    const commands = planPreviewTurn(graph, run);
    if (commands.length === 0) outcome = { kind: "cut", words: "The preview cannot go on from here." };
    for (const c of commands) {
      if (c.type === "mark_advanced") {
        const s = run.steps.find((x) => x.id === c.stepId);
        if (s) s.advanced = true;
      } else if (c.type === "record" && c.event === "branch.evaluated" && c.nodeId) {
        const node = graph.nodes.find((n) => n.id === c.nodeId);
        if (node?.kind === "branch") steps.push(branchStep(node, Boolean(c.data?.result)));
      } else if (c.type === "complete_run") {
        const node = graph.nodes.find((n) => n.id === c.nodeId);
        if (node) steps.push({ ...base(node), words: "The run completes here.", detail: { kind: "end" } });
        outcome = { kind: "completed", words: "The run completes." };
      } else if (c.type === "fail_run") {
        outcome =
          c.budget === "steps"
            ? { kind: "cut", words: `The preview stops after ${previewStepLimit} steps: this automation goes round a loop.` }
            : { kind: "failed", words: `A run would stop here: ${c.reason}.` };
      } else if (c.type === "schedule_step") {
        const node = graph.nodes.find((n) => n.id === c.nodeId) as GraphNode;
        const { step, output } = stepPreview(node);
        steps.push(step);
        const state: StepState = { id: `preview_${run.steps.length + 1}`, nodeId: node.id, iteration: c.iteration, status: "done", output, error: null, advanced: false, leased: false };
        run.steps.push(state);
        context.steps[node.id] = { output };
      }
    }
  }
  const missing = steps.flatMap((s) => s.missing);
  return { steps, missing, outcome: outcome ?? { kind: "cut", words: `The preview stops after ${previewStepLimit} steps.` } };

  function branchStep(node: Extract<GraphNode, { kind: "branch" }>, result: boolean): StepPreview {
    const edge = result ? "true" : "false";
    const to = graph.edges.find((e) => e.from === node.id && e.label === edge)?.to ?? null;
    const why = leaves(node.config.condition).map((path) => {
      const value = readPath(context, path);
      return value === undefined || value === null || value === "" ? `${path} is empty in this sample` : `${path} is ${JSON.stringify(value)} in this sample`;
    });
    return {
      ...base(node),
      words: `${result ? "Holds" : "Does not hold"}: takes the ${edge} edge${to ? ` to ${nameOf(to)}` : ""}.`,
      detail: { kind: "branch", condition: conditionSentence(node.config.condition), result, edge, to, why },
    };
  }

  function nameOf(id: string): string {
    const n = graph.nodes.find((x) => x.id === id);
    return n?.name ?? id;
  }

  function stepPreview(node: GraphNode): { step: StepPreview; output: unknown } {
    const step = base(node);
    const fill = (template: string, field: string, mode: "text" | "html" = "text") => marked(template, field, mode, node.id, step.missing);
    const connection = (name: string | undefined, kind: string) => connections.find((c) => c.name === name && c.kind === kind);
    switch (node.kind) {
      case "send_email": {
        const c = node.config;
        const email = rendering(() => renderEmail(c, withMarkers(["to", c.to], ["subject", c.subject], ["text", c.text], ["html", c.html])));
        const stops = stopsFor(step.missing);
        const consent = contact?.consent === "withdrawn" ? " The contact withdrew consent: it would be skipped." : c.requireConsent && contact?.consent !== "granted" ? " It needs consent, which this contact has not given: it would be skipped." : "";
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
      case "crm_upsert": {
        const c = node.config;
        const crm = crmConnectionConfig.safeParse(connection(c.connection, "crm")?.config);
        const rendered = rendering(() => renderCrmUpsert(c, withMarkers(["matchKey", c.matchKey], ...Object.entries(c.fields).map(([k, v]) => [`fields.${k}`, v] as [string, string]))));
        const call = rendered && crm.success ? crmUpsertCall(crm.data.baseUrl, c.object, rendered) : null;
        const noKey = rendered?.externalId === "" ? `"Match records by" (${c.matchKey}) is empty in this sample, so no record can be named` : undefined;
        const stops = stopsFor(step.missing) ?? noKey;
        return {
          step: {
            ...step,
            words: `Creates or updates the ${c.object} record ${rendered?.externalId ? `"${rendered.externalId}"` : ""} in "${c.connection}"${crm.success ? "" : ` (no CRM connection named "${c.connection}" yet)`}.`,
            assumption: "Assumes the CRM accepts the record.",
            ...(stops ? { stops } : {}),
            detail: { kind: "crm_upsert", connection: c.connection, request: call ? { method: call.method, url: call.url, headers: { Authorization: "Bearer (the CRM's API token: not shown)" }, body: call.body } : null },
          },
          output: { id: "[the CRM's record id]" },
        };
      }
      case "http_request": {
        const c = node.config;
        const { hasBody, body } = httpRequestBody(c, sample.input);
        const http = c.connection ? httpConnectionConfig.safeParse(connection(c.connection, "http")?.config) : null;
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
      case "model_draft": {
        const c = node.config;
        const rendered = rendering(() => renderDraftPrompt(c, withMarkers(["prompt", c.prompt], ["system", c.system])));
        const model = modelConnectionConfig.safeParse(connection(c.connection, "model")?.config);
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
      case "wait": {
        const c = node.config;
        const choice = zoneFor(c, sample.input, contact?.time_zone ?? null);
        const instants = previewWait(c.rule, choice.zone, clock, 3);
        const first = instants[0] as PreviewInstant;
        const from = clock;
        clock = new Date(first.at);
        const zoneWords =
          c.rule.kind === "duration"
            ? ""
            : `in ${choice.zone}, from ${zoneSourceWords(choice.source)}${choice.unknown ? ` ("${choice.unknown}" in the sample is not a time zone)` : ""}`;
        return {
          step: {
            ...step,
            words: `Waits ${ruleWords(c.rule)}${zoneWords ? `, ${zoneWords}` : ""}.${c.spreadSeconds > 0 ? ` Each run is then spread by up to ${durationWords(c.spreadSeconds)}.` : ""}`,
            ...(turnAssumption(from, now) ? { assumption: turnAssumption(from, now) } : {}),
            detail: { kind: "wait", zone: choice.zone, zoneWords, instants },
          },
          output: { dueAt: first.at, firedAt: first.at },
        };
      }
      case "wait_for_reply": {
        const c = node.config;
        const deadline = instantAfter(c.timeoutSeconds);
        const replied = assume.reply;
        if (!replied) clock = new Date(deadline.at);
        return {
          step: {
            ...step,
            words: `Waits up to ${durationWords(c.timeoutSeconds)} (until ${deadline.local}) for a reply to the email of ${nameOf(c.replyTo)}.`,
            assumption: replied ? "Assumes the contact replies in time (choose “No reply” to see the other way)." : "Assumes no reply comes before the deadline.",
            detail: { kind: "wait_for_reply", replyTo: c.replyTo, deadline },
          },
          output: replied ? { outcome: "reply", reply: { text: "[their reply]", subject: "[their reply's subject]", from: contact?.email ?? "" } } : { outcome: "timeout" },
        };
      }
      case "approval": {
        const c = node.config;
        const title = fill(c.title, "title");
        const content = fill(c.content, "content");
        const send = c.email ? graph.nodes.find((n) => n.id === c.email) : undefined;
        const email =
          send?.kind === "send_email"
            ? rendering(() => renderEmail(send.config, withMarkers(["to", send.config.to], ["subject", send.config.subject], ["text", send.config.text], ["html", send.config.html])))
            : null;
        const deadline = instantAfter(c.deadlineSeconds);
        return {
          step: {
            ...step,
            words: `Asks ${approversWords(c.approvers)} to decide by ${deadline.local}${c.slack ? " (in Slack and the approvals inbox)" : " (in the approvals inbox)"}.`,
            assumption: `Assumes it is ${assume.approval} (choose the other decision to see that way).`,
            detail: { kind: "approval", approvers: approversWords(c.approvers), title, content, email, deadline },
          },
          output: { outcome: "reply", reply: { decision: assume.approval, byName: "[the approver]" } },
        };
      }
      default:
        return { step: { ...step, words: "A preview cannot say what this step does.", detail: { kind: "other" } }, output: {} };
    }

    /** The context with every template's missing references filled with their own names (and named in `missing`). */
    function withMarkers(...fields: [string, string | undefined][]): TemplateContext {
      let ctx = context;
      for (const [field, template] of fields) if (template !== undefined) ctx = markMissing(template, field, ctx, node.id, step.missing);
      return ctx;
    }
  }

  /** Renders, or null when even the marked context cannot fill a template in (a reference below a plain value). */
  function rendering<T>(render: () => T): T | null {
    try {
      return render();
    } catch (error) {
      if (error instanceof TemplateError) return null;
      throw error;
    }
  }

  function marked(template: string, field: string, mode: "text" | "html", nodeId: string, missing: MissingValue[]): string {
    const ctx = markMissing(template, field, context, nodeId, missing);
    return rendering(() => renderTemplate(template, ctx, mode)) ?? template;
  }

  /** An instant `seconds` from the run's clock, as the wait preview shows instants (in the contact's zone, or UTC). */
  function instantAfter(seconds: number): PreviewInstant {
    const zone = contact?.time_zone ?? "UTC";
    return previewWait({ kind: "duration", seconds }, zone, clock, 1)[0] as PreviewInstant;
  }
}

function turnAssumption(from: Date, now: Date): string | undefined {
  return from.getTime() === now.getTime() ? undefined : "Counted from when the step before it would end.";
}

/** The first reason a real run stops here, from the references that do not exist in the sample. */
function stopsFor(missing: MissingValue[]): string | undefined {
  const first = missing.find((m) => m.stops);
  return first ? `A real run would stop here: ${first.path ? `{{${first.path}}}` : "a template"} has no value, so the step cannot be filled in.` : undefined;
}

/** The paths a condition reads. */
function leaves(c: Condition): string[] {
  if ("all" in c) return c.all.flatMap(leaves);
  if ("any" in c) return c.any.flatMap(leaves);
  if ("not" in c) return leaves(c.not);
  return [c.path];
}

/**
 * Names each reference of `template` with no value in `context` (absent, null or "") and returns a copy of the
 * context in which the absent ones render as their own reference (`{{input.company}}`), so the email can still be
 * shown with the gap visible in place.
 */
function markMissing(template: string, field: string, context: TemplateContext, nodeId: string, missing: MissingValue[]): TemplateContext {
  let out = context;
  for (const ref of templateReferences(template)) {
    if (!roots.has(ref.parts[0] as string)) continue;
    const path = ref.parts.join(".");
    let value: unknown = context;
    let absent = false;
    for (const part of ref.parts) {
      if (value === null || typeof value !== "object" || !(part in value)) {
        absent = true;
        break;
      }
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined) absent = true;
    if (!absent && value !== null && value !== "") continue;
    if (!missing.some((m) => m.path === path && m.field === field)) missing.push({ nodeId, field, path, words: missingWords(path, ref.parts), stops: absent });
    if (absent) out = setPath(out, ref.parts, `{{${path}}}`);
  }
  return out;
}

function missingWords(path: string, parts: string[]): string {
  if (parts[0] === "steps") return `{{${path}}} has no value here: step ${parts[1]} has not run before this one in this sample`;
  return `{{${path}}} is empty in this sample`;
}

/** A copy of `root` with `value` at `parts`, creating objects on the way; unchanged where a plain value is in the way. */
function setPath<T>(root: T, parts: string[], value: unknown): T {
  const [head, ...rest] = parts;
  if (head === undefined) return value as T;
  if (root === undefined || root === null) return { [head]: setPath(undefined, rest, value) } as T;
  if (typeof root !== "object" || Array.isArray(root)) return root;
  return { ...root, [head]: setPath((root as Record<string, unknown>)[head], rest, value) } as T;
}

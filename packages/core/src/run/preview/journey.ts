import { conditionSentence } from "../../versions/kinds/branch";
import { splitWeights } from "../../versions/kinds/split";
import { kindOf } from "../../versions/kinds/registry";
import { contactOf } from "../start/contact-of";
import { templateContact } from "../../base/templates/contact";
import type { StepState } from "../../base/types/steps";
import type { Condition, Graph, GraphNode } from "../../versions/graph";
import { readPath } from "../../decide/walk/condition";
import { planPreviewTurn, type RunState } from "../../decide/walk/plan";
import { crmUpsertPreview, httpRequestPreview, modelDraftPreview, sendEmailPreview } from "./journey-calls";
import { type JourneyWalk, nodeName, type Previewed, type StepDraft } from "./journey-context";
import type { JourneyPreview, PreviewAssume, PreviewConnection, PreviewSample, StepPreview } from "./journey-types";
import { approvalPreview, waitForReplyPreview, waitPreview } from "./journey-waits";

/**
 * The editor's preview: a run of a graph with a sample, walked by the walk itself (decide/walk/plan.ts planPreviewTurn),
 * with every step's settle simulated instead of performed. Each step says what it would do (the email as renderEmail
 * renders it, the request a connector would send, a wait's instants from the timers' own schedule), and every
 * template reference with no value in the sample is named. Pure: no database, no network, no clock (`now` is a
 * parameter). A step's preview is in journey-calls.ts (a step that calls out) or journey-waits.ts (one that waits),
 * with the helpers of journey-context.ts; the shapes are in journey-types.ts.
 */

/** A walk through a loop is cut after this many steps. */
export const previewStepLimit = 40;

const defaults: PreviewAssume = { approval: "approved", reply: true };

export function previewJourney(
  graph: Graph,
  sample: PreviewSample,
  now: Date,
  options: { assume?: Partial<PreviewAssume>; connections?: PreviewConnection[] } = {},
): JourneyPreview {
  const trigger = graph.nodes.find((n): n is Extract<GraphNode, { kind: "trigger" }> => n.kind === "trigger");
  const found: PreviewSample["contact"] = sample.contact === undefined ? (trigger ? contactOf(trigger.config, sample.input) : null) : sample.contact;
  const contact = found
    ? templateContact({ id: found.id ?? "(the contact)", email: found.email, timeZone: found.timeZone, consent: found.consent ?? "unknown", attributes: found.attributes ?? null })
    : null;
  const w: JourneyWalk = {
    graph,
    sample,
    now,
    assume: { ...defaults, ...options.assume },
    connections: options.connections ?? [],
    contact,
    context: { input: sample.input, contact, steps: {}, run: { id: "(preview)" } },
    clock: now,
  };
  const steps: StepPreview[] = trigger ? [triggerStep(w, trigger)] : [];
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
        if (node?.kind === "branch") steps.push(branchStep(w, node, Boolean(c.data?.result)));
      } else if (c.type === "record" && c.event === "split.chosen" && c.nodeId) {
        const node = graph.nodes.find((n) => n.id === c.nodeId);
        if (node?.kind === "split") steps.push(splitStep(w, node, String(c.data?.path)));
      } else if (c.type === "complete_run") {
        const node = graph.nodes.find((n) => n.id === c.nodeId);
        if (node) steps.push({ ...draftOf(node), words: "The run completes here.", detail: { kind: "end" } });
        outcome = { kind: "completed", words: "The run completes." };
      } else if (c.type === "fail_run") {
        outcome =
          c.budget === "steps"
            ? { kind: "cut", words: `The preview stops after ${previewStepLimit} steps: this automation goes round a loop.` }
            : { kind: "failed", words: `A run would stop here: ${c.reason}.` };
      } else if (c.type === "schedule_step") {
        // The step's settle is simulated: it is done with the output its preview assumes.
        const node = graph.nodes.find((n) => n.id === c.nodeId) as GraphNode;
        const { step, output } = stepPreview(w, node);
        steps.push(step);
        const state: StepState = { id: `preview_${run.steps.length + 1}`, nodeId: node.id, iteration: c.iteration, status: "done", output, error: null, advanced: false, leased: false };
        run.steps.push(state);
        w.context.steps[node.id] = { output };
      }
    }
  }
  const missing = steps.flatMap((s) => s.missing);
  return { steps, missing, outcome: outcome ?? { kind: "cut", words: `The preview stops after ${previewStepLimit} steps.` } };
}

/** A step's preview before its words: its node's label, icon and name, no gaps found yet. */
function draftOf(node: GraphNode): StepDraft {
  const module = kindOf(node.kind);
  return { nodeId: node.id, kind: node.kind, label: module?.label ?? node.kind, icon: module?.icon ?? "?", name: node.name ?? node.id, missing: [] };
}

function triggerStep(w: JourneyWalk, trigger: Extract<GraphNode, { kind: "trigger" }>): StepPreview {
  const contact = w.contact;
  return {
    ...draftOf(trigger),
    words: contact
      ? `Starts with this sample; the contact is ${contact.email}${contact.time_zone ? ` (${contact.time_zone})` : " (no time zone known)"}.`
      : `Starts with this sample; it names no contact (no email address at "${trigger.config.contactEmailField}").`,
    detail: { kind: "trigger", contact: contact ? { email: contact.email, timeZone: contact.time_zone, consent: contact.consent } : null },
  };
}

function branchStep(w: JourneyWalk, node: Extract<GraphNode, { kind: "branch" }>, result: boolean): StepPreview {
  const edge = result ? "true" : "false";
  const to = w.graph.edges.find((e) => e.from === node.id && e.label === edge)?.to ?? null;
  const why = leaves(node.config.condition).map((path) => {
    const value = readPath(w.context, path);
    return value === undefined || value === null || value === "" ? `${path} is empty in this sample` : `${path} is ${JSON.stringify(value)} in this sample`;
  });
  return {
    ...draftOf(node),
    words: `${result ? "Holds" : "Does not hold"}: takes the ${edge} edge${to ? ` to ${nodeName(w, to)}` : ""}.`,
    detail: { kind: "branch", condition: conditionSentence(node.config.condition), result, edge, to, why },
  };
}

function splitStep(w: JourneyWalk, node: Extract<GraphNode, { kind: "split" }>, path: string): StepPreview {
  const to = w.graph.edges.find((e) => e.from === node.id && e.label === path)?.to ?? null;
  const weights = splitWeights(node.config);
  const who = w.contact ? w.contact.email : "this sample (it names no contact)";
  return {
    ...draftOf(node),
    words: `${who} takes path ${path} (weights ${weights})${to ? `, to ${nodeName(w, to)}` : ""}; always the same path for this contact.`,
    detail: { kind: "split", path, weights, to },
  };
}

/** What a scheduled step would do, by its kind, and the output the walk goes on with. */
function stepPreview(w: JourneyWalk, node: GraphNode): Previewed {
  const step = draftOf(node);
  switch (node.kind) {
    case "send_email":
      return sendEmailPreview(w, node, step);
    case "crm_upsert":
      return crmUpsertPreview(w, node, step);
    case "http_request":
      return httpRequestPreview(w, node, step);
    case "model_draft":
      return modelDraftPreview(w, node, step);
    case "wait":
      return waitPreview(w, node, step);
    case "wait_for_reply":
      return waitForReplyPreview(w, node, step);
    case "approval":
      return approvalPreview(w, node, step);
    default:
      return { step: { ...step, words: "A preview cannot say what this step does.", detail: { kind: "other" } }, output: {} };
  }
}

/** The paths a condition reads. */
function leaves(c: Condition): string[] {
  if ("all" in c) return c.all.flatMap(leaves);
  if ("any" in c) return c.any.flatMap(leaves);
  if ("not" in c) return leaves(c.not);
  return [c.path];
}

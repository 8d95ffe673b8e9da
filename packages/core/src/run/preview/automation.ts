import type { Db } from "@holdfast/db";
import { HoldfastError, NotFoundError } from "../../base/errors";
import { previewJourney } from "./journey";
import type { JourneyPreview, PreviewAssume, PreviewSample } from "./journey-types";
import { automationDraftsGet } from "../../store/sql/automation-drafts";
import { automationsSampleInput } from "../../store/sql/automations";
import { connectionsListKinds } from "../../store/sql/connections";
import { contactsDetail, contactsIdByEmail } from "../../store/sql/contacts";
import { databaseNow } from "../../store/sql/database";
import { contactOf } from "../start/contact-of";
import type { FlowGraph } from "../../versions/kinds/flow";
import { sampleOf as graphSample } from "../../versions/kinds/variables";
import { jsonShapeProblem } from "../../base/bodies";
import { graphSchema } from "../../versions/graph";

/**
 * The editor's preview, the shell around journey.ts (which stays pure): it reads the sample (the automation's stored one, one
 * typed in, or a contact of Settings with the stored payload), the organisation's connections (settings only, never
 * secrets) and the database's clock, and writes nothing: no run, no contact, no step, no outside call.
 */

export type SampleChoice = { from: "stored" } | { from: "typed"; json: string } | { from: "contact"; contactId: string };

/** A typed sample is smaller than a webhook may be: it is a person's example, and it is walked on every keystroke. */
export const typedSampleLimits = { maxChars: 64_000, maxDepth: 16, maxValues: 2_000 } as const;

export class PreviewSampleError extends HoldfastError {
  constructor(message: string) {
    super("preview_sample", message);
  }
}

export type AutomationPreview =
  | { ok: true; sampleWords: string; input: unknown; preview: JourneyPreview }
  | { ok: false; sampleWords: string; problems: string[] };

export async function previewAutomation(
  db: Db,
  orgId: string,
  automationId: string,
  request: { graph?: unknown; sample: SampleChoice; assume?: Partial<PreviewAssume> },
): Promise<AutomationPreview> {
  const stored = await automationsSampleInput(db, orgId, automationId);
  if (!stored.found) throw new NotFoundError("automation_not_found", `automation ${automationId}`);
  const graph = request.graph ?? (await automationDraftsGet(db, orgId, automationId))?.graph;
  // The stored sample is a delivery's payload over the trigger's declared fields and typed sample (none needs a delivery).
  const storedOrDeclared = ((graph ? graphSample(graph as FlowGraph, stored.sample) : stored.sample) ?? null) as Record<string, unknown> | null;
  const { sample, words } = await sampleOf(db, orgId, request.sample, storedOrDeclared);
  const parsed = graphSchema.safeParse(graph);
  if (!parsed.success) {
    const problems = [...new Set(parsed.error.issues.map((i) => i.message))].slice(0, 5);
    return { ok: false, sampleWords: words, problems: ["Some steps are not set up yet, so the preview cannot walk the automation:", ...problems] };
  }
  // A payload's contact as a start would find it: the stored contact of that address (its zone and consent), if any.
  if (sample.contact === undefined) {
    const trigger = parsed.data.nodes.find((n) => n.kind === "trigger");
    const named = trigger?.kind === "trigger" ? contactOf(trigger.config, sample.input) : null;
    const id = named ? await contactsIdByEmail(db, orgId, named.email) : null;
    const known = id ? await contactsDetail(db, orgId, id) : null;
    if (known && named) {
      sample.contact = { id: known.id, email: known.email, timeZone: named.timeZone ?? known.timeZone, consent: known.consent, attributes: { ...known.attributes, ...named.attributes } };
    }
  }
  const connections = await connectionsListKinds(db, orgId);
  const preview = previewJourney(parsed.data, sample, await databaseNow(db), { connections, ...(request.assume ? { assume: request.assume } : {}) });
  return { ok: true, sampleWords: words, input: sample.input, preview };
}

async function sampleOf(db: Db, orgId: string, choice: SampleChoice, stored: Record<string, unknown> | null): Promise<{ sample: PreviewSample; words: string }> {
  switch (choice.from) {
    case "stored":
      if (!stored) throw new PreviewSampleError("This automation has no sample yet: send one delivery to its trigger, or type a sample in.");
      return { sample: { input: stored }, words: "the automation's sample payload" };
    case "typed": {
      if (choice.json.length > typedSampleLimits.maxChars) throw new PreviewSampleError(`The sample is too long: keep it under ${typedSampleLimits.maxChars.toLocaleString("en")} characters.`);
      const shape = jsonShapeProblem(choice.json, { maxDepth: typedSampleLimits.maxDepth, maxValues: typedSampleLimits.maxValues });
      if (shape) throw new PreviewSampleError(`The sample is too big: ${shape.replace(/^the body/, "it").replace(/: send .*$/, "")}.`);
      let input: unknown;
      try {
        input = JSON.parse(choice.json);
      } catch {
        throw new PreviewSampleError('The sample is not valid JSON: check the quotes and commas, e.g. {"email": "ann@example.com", "company": "Acme"}.');
      }
      if (input === null || typeof input !== "object" || Array.isArray(input)) throw new PreviewSampleError('The sample must be a JSON object, such as {"email": "ann@example.com"}.');
      return { sample: { input }, words: "the sample typed in" };
    }
    case "contact": {
      const contact = await contactsDetail(db, orgId, choice.contactId);
      if (!contact || contact.erased) throw new PreviewSampleError("That contact is not in Settings any more (it may have been erased): pick another.");
      return {
        sample: { input: stored ?? {}, contact: { id: contact.id, email: contact.email, timeZone: contact.timeZone, consent: contact.consent, attributes: contact.attributes } },
        words: `${contact.email}${stored ? ", with the automation's sample payload" : " (no sample payload yet: the payload is empty)"}`,
      };
    }
  }
}

import { type Db, inTx, type Tx } from "@holdfast/db";
import { HoldfastError } from "../../base/errors";
import { canonicalJson } from "../../base/json";
import { automationDraftsGet, automationDraftsInsertIfNone } from "../../store/sql/automation-drafts";
import { automationVersionsLatest } from "../../store/sql/automation-versions";
import { automationsFindBySlug, automationsSetGoal } from "../../store/sql/automations";
import type { GraphProblem } from "../../versions/graph";
import { type AnswerProblem, type AutomationTemplate, buildFromTemplate, type TemplateGraph, templateOf } from "../../versions/kinds/templates";
import { AutomationExistsError, createAutomation } from "../../versions/triggers/credentials";
import { publishProblems } from "./drafts";

/**
 * A new automation from a template (versions/kinds/templates/): the answers checked, the automation created with its
 * trigger credentials and its draft already the template's journey (and its goal, when the template has one), all
 * in one transaction. A repeated Create (a double click, a retry after a lost answer) reads back the automation the
 * first one made: same address, same untouched draft, nothing published; anything else at that address is a
 * conflict in words.
 */
export class TemplateAnswersError extends HoldfastError {
  constructor(readonly problems: AnswerProblem[]) {
    super("template_answers", `Answer these first: ${problems.map((p) => `${p.label}: ${p.message}`).join("; ")}`);
  }
}

function templateNamed(templateId: string): AutomationTemplate {
  const template = templateOf(templateId);
  if (!template) throw new HoldfastError("template_not_found", `There is no template "${templateId}": pick one from the gallery.`);
  return template;
}

function graphOf(template: AutomationTemplate, answers: unknown): TemplateGraph {
  const built = buildFromTemplate(template, answers);
  if (!built.ok) throw new TemplateAnswersError(built.problems);
  return built.graph;
}

/**
 * What stands between these answers and a publish: each missing or wrong answer, then (when all are given) the
 * publish checks of the journey they make against the organisation (a model budget not set, a connection gone).
 */
export async function templateProblems(db: Db, orgId: string, templateId: string, answers: unknown): Promise<{ answers: AnswerProblem[]; publish: GraphProblem[] }> {
  const built = buildFromTemplate(templateNamed(templateId), answers);
  if (!built.ok) return { answers: built.problems, publish: [] };
  return { answers: [], publish: await publishProblems(db, orgId, built.graph) };
}

export async function createFromTemplate(
  db: Db,
  a: { orgId: string; templateId: string; answers: unknown; name: string; slug: string },
): Promise<{ id: string; created: boolean }> {
  const template = templateNamed(a.templateId);
  const graph = graphOf(template, a.answers);
  return inTx(db, async (tx) => {
    const made = await createOrRaced(tx, a);
    if (!made) return { id: await readBack(tx, a, graph), created: false };
    await automationDraftsInsertIfNone(tx, a.orgId, made.id, graph);
    if (template.goal) await automationsSetGoal(tx, a.orgId, made.id, template.goal);
    return { id: made.id, created: true };
  });
}

/** The new automation, or null when its address is taken (by an earlier Create, or one committed meanwhile). */
async function createOrRaced(tx: Tx, a: { orgId: string; slug: string; name: string }): Promise<{ id: string } | null> {
  if (await automationsFindBySlug(tx, a.orgId, a.slug)) return null;
  try {
    return await createAutomation(tx, { orgId: a.orgId, slug: a.slug, name: a.name });
  } catch (error) {
    if (error instanceof AutomationExistsError) return null;
    throw error;
  }
}

/** The automation at this address when it is this very request's (same name, its draft as made, never edited or published). */
async function readBack(tx: Tx, a: { orgId: string; slug: string; name: string }, graph: TemplateGraph): Promise<string> {
  const found = await automationsFindBySlug(tx, a.orgId, a.slug);
  if (!found) throw new AutomationExistsError(a.slug);
  const [draft, latest] = await Promise.all([automationDraftsGet(tx, a.orgId, found.id), automationVersionsLatest(tx, a.orgId, found.id)]);
  const same = found.name === a.name && draft?.revision === 1 && !latest && canonicalJson(draft.graph) === canonicalJson(graph);
  if (!same) throw new AutomationExistsError(a.slug);
  return found.id;
}

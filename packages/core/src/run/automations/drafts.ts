import { type Db, inTx, type Tx } from "@holdfast/db";
import { assertEditable } from "./lifecycle";
import { HoldfastError, NotFoundError } from "../../base/errors";
import type { AllowList } from "../../base/allow-list";
import { literalUrlRefusal } from "../../providers/net/egress";
import { automationDraftsGet, automationDraftsInsertIfNone, automationDraftsLockGraph, automationDraftsSaveIfRevision } from "../../store/sql/automation-drafts";
import {
  automationVersionsInsertPublished,
  automationVersionsLatest,
  automationVersionsPublished,
  automationVersionsStepIds,
} from "../../store/sql/automation-versions";
import { automationsExists, automationsLock } from "../../store/sql/automations";
import { automationsSendingExemptions } from "../../store/sql/automations-cap";
import { canonicalJson } from "../../base/json";
import { orgProblems, runtimeProblems } from "../../versions/checks";
import { type Graph, type GraphProblem, graphProblems, graphSchema } from "../../versions/graph";
import { reservedIdProblems } from "../../versions/reserved-ids";

/**
 * Drafts and publishing. A draft is saved as the editor has it, valid or not (an autosave never loses an edit),
 * guarded by its revision: a save based on an older revision is refused with the current draft, so two tabs never
 * overwrite each other silently. Publishing validates the draft fully and copies it into a new version (N+1),
 * immutable from then on (a trigger refuses UPDATE and DELETE of published versions).
 */
export interface Draft {
  automationId: string;
  graph: unknown;
  revision: number;
  updatedBy: string | null;
  updatedAt: Date;
  /** The newest published version's number (null: never published). */
  published: number | null;
  /** Node ids that appear in a published version: they may no longer be renamed. */
  publishedIds: string[];
  problems: GraphProblem[];
}

export class DraftConflictError extends HoldfastError {
  constructor(readonly current: Draft) {
    super("draft_conflict", `the draft was saved elsewhere (revision ${current.revision}); reload to continue from it`);
  }
}

export class InvalidDraftError extends HoldfastError {
  constructor(readonly problems: GraphProblem[]) {
    super("invalid_draft", `the draft cannot be published: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`);
  }
}

/** A new automation: its trigger above its end (the editor's canvas flows top to bottom). */
const emptyGraph = {
  nodes: [
    { id: "trigger", kind: "trigger", config: {}, position: { x: 0, y: 0 } },
    { id: "end", kind: "end", config: {}, position: { x: 0, y: 120 } },
  ],
  edges: [{ from: "trigger", to: "end" }],
};

/**
 * Every problem a graph has for publishing that needs no database: its shape (zod), the structural rules, refused
 * destinations, then what would fail at run time (versions/checks.ts).
 */
export function draftProblems(graph: unknown, allow?: AllowList): GraphProblem[] {
  const parsed = graphSchema.safeParse(graph);
  if (!parsed.success) return parsed.error.issues.map((i) => ({ path: nodePath(i.path, graph), message: i.message }));
  return distinct([...graphProblems(parsed.data), ...egressProblems(parsed.data, allow), ...runtimeProblems(parsed.data)]);
}

/** draftProblems, then the checks against the organisation (its connections, its members) when the shape is valid. */
export async function publishProblems(tx: Db | Tx, orgId: string, graph: unknown, allow?: AllowList): Promise<GraphProblem[]> {
  const problems = draftProblems(graph, allow);
  const parsed = graphSchema.safeParse(graph);
  return parsed.success ? [...problems, ...(await orgProblems(tx, orgId, parsed.data))] : problems;
}

/** zod says `nodes.3.config.zone`; the other checks (and a person) name the node: `node:wait_1.config.zone`. */
function nodePath(path: PropertyKey[], graph: unknown): string {
  const [head, index, ...rest] = path;
  const nodes = (graph as { nodes?: unknown } | null)?.nodes;
  const id = head === "nodes" && typeof index === "number" && Array.isArray(nodes) ? (nodes[index] as { id?: unknown } | null)?.id : undefined;
  return typeof id === "string" && id ? [`node:${id}`, ...rest.map(String)].join(".") : path.map(String).join(".");
}

/** graphProblems and runtimeProblems both say when a node is unreachable: once is enough. */
function distinct(problems: GraphProblem[]): GraphProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\u0000${p.message}`;
    return !seen.has(key) && Boolean(seen.add(key));
  });
}

/**
 * Literal destinations the egress guard would refuse at run time (an http_request URL without templates naming a
 * loopback, private, link-local ... address): refused at publish, so the editor says so before any run fails.
 * Names are left to connect time, where what they resolve to is checked.
 */
export function egressProblems(graph: Graph, allow?: AllowList): GraphProblem[] {
  const problems: GraphProblem[] = [];
  for (const node of graph.nodes) {
    if (node.kind !== "http_request" || node.config.url.includes("{{")) continue;
    const refused = literalUrlRefusal(node.config.url, allow);
    if (refused) {
      problems.push({
        path: `node:${node.id}.config.url`,
        message: `the egress guard refuses ${refused.host}: ${refused.reason} (set HOLDFAST_EGRESS_ALLOW to allow it)`,
      });
    }
  }
  return problems;
}

export async function getDraft(db: Db, orgId: string, automationId: string): Promise<Draft> {
  if (!(await automationsExists(db, orgId, automationId))) throw new NotFoundError("automation_not_found", `automation ${automationId}`);
  const versions = await automationVersionsPublished(db, orgId, automationId);
  // The first open of the editor starts from the newest published version (or a trigger and an end).
  await automationDraftsInsertIfNone(db, orgId, automationId, versions[0]?.graph ?? emptyGraph);
  const row = await automationDraftsGet(db, orgId, automationId);
  if (!row) throw new NotFoundError("automation_not_found", `automation ${automationId}`);
  const publishedIds = new Set<string>();
  for (const v of versions) for (const n of (v.graph as Graph).nodes ?? []) publishedIds.add(n.id);
  const problems = [...(await publishProblems(db, orgId, row.graph)), ...(await reservedProblems(db, orgId, automationId, row.graph))];
  return { automationId, ...row, published: versions[0]?.version ?? null, publishedIds: [...publishedIds].sort(), problems };
}

/** Step ids of the draft that published versions reserve (versions/reserved-ids.ts); any shape of draft. */
async function reservedProblems(tx: Db | Tx, orgId: string, automationId: string, graph: unknown): Promise<GraphProblem[]> {
  const raw = (graph as { nodes?: unknown } | null)?.nodes;
  const nodes = (Array.isArray(raw) ? raw : []).filter(
    (n): n is { id: string; kind: string } => typeof n?.id === "string" && typeof n?.kind === "string",
  );
  return nodes.length ? reservedIdProblems({ nodes }, await automationVersionsStepIds(tx, orgId, automationId)) : [];
}

/**
 * Saves the editor's graph as the draft if `baseRevision` is still current. Renaming a node that was published
 * (its id gone while a node of the same kind appeared in its place is a rename, but it cannot be told from a
 * delete and an add) is allowed as a delete and an add: published step ids are never rewritten.
 */
export async function saveDraft(db: Db, orgId: string, automationId: string, graph: unknown, baseRevision: number, by: string): Promise<Draft> {
  if (canonicalJson(graph).length > 2_000_000) throw new HoldfastError("draft_too_large", "a draft is at most 2 MB");
  await assertEditable(db, orgId, automationId);
  const saved = await automationDraftsSaveIfRevision(db, orgId, automationId, graph, baseRevision, by);
  const current = await getDraft(db, orgId, automationId);
  if (saved === undefined) throw new DraftConflictError(current);
  return current;
}

export interface Published {
  versionId: string;
  version: number;
  publishedAt: Date;
  publishedBy: string;
  /** True when the draft was already the newest version (a repeated Publish): that version, nothing new. */
  alreadyPublished: boolean;
}

/** Publishes the draft as version N+1 (refused with every problem when it is not valid, or unchanged). */
export async function publishDraft(db: Db, orgId: string, automationId: string, by: string, role: "owner" | "editor" | "approver" | "viewer"): Promise<Published> {
  return inTx(db, async (tx) => {
    const draft = await automationDraftsLockGraph(tx, orgId, automationId);
    if (!draft) throw new NotFoundError("automation_not_found", `draft of automation ${automationId}`);
    if (role !== "owner") await assertNoOwnerExemptions(tx, orgId, automationId);
    return publishGraph(tx, { orgId, automationId, graph: draft.graph, by });
  });
}

/**
 * An owner's exemptions (transactional: not capped; its own quiet hours) were given to the journey the owner saw: an
 * editor may not publish another journey under them, or a marketing sequence could go out uncapped at night.
 */
async function assertNoOwnerExemptions(tx: Tx, orgId: string, automationId: string): Promise<void> {
  const exempt = await automationsSendingExemptions(tx, orgId, automationId);
  if (!exempt || (!exempt.transactional && !exempt.ownQuietHours)) return;
  const what = [exempt.transactional ? "marked it transactional (not capped)" : null, exempt.ownQuietHours ? "gave it its own quiet hours" : null].filter(Boolean).join(" and ");
  throw new HoldfastError(
    "publish_forbidden",
    `an owner ${what}, so only an owner may publish a new version of this automation: ask an owner to publish it, or to take that setting off first`,
  );
}

/**
 * Publish's checks and its new version, inside the caller's transaction: every problem refuses the graph
 * (InvalidDraftError), the same graph as the newest version reads that version back, and anything else becomes
 * version N+1, numbered under the automation row's lock. Publish (publishDraft) and the seed both publish here.
 * `allow`: the egress exceptions the destinations are checked against (default HOLDFAST_EGRESS_ALLOW).
 */
export async function publishGraph(
  tx: Tx,
  p: { orgId: string; automationId: string; graph: unknown; by: string; allow?: AllowList },
): Promise<Published> {
  const { orgId, automationId, by } = p;
  const problems = [...(await publishProblems(tx, orgId, p.graph, p.allow)), ...(await reservedProblems(tx, orgId, automationId, p.graph))];
  if (problems.length) throw new InvalidDraftError(problems);
  const graph = graphSchema.parse(p.graph);
  // Versions of one automation are numbered under its row's lock: two publishes never take the same number.
  await automationsLock(tx, orgId, automationId);
  await assertEditable(tx, orgId, automationId);
  const latest = await automationVersionsLatest(tx, orgId, automationId);
  // Publishing the same draft again (a double click, a retry) reads back the version it already is.
  if (latest && canonicalJson(latest.graph) === canonicalJson(graph)) {
    const { graph: _, ...version } = latest;
    return { ...version, alreadyPublished: true };
  }
  const row = await automationVersionsInsertPublished(tx, { orgId, automationId, version: (latest?.version ?? 0) + 1, graph, by });
  return { ...row, alreadyPublished: false };
}

import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { canonicalJson, HoldfastError, NotFoundError } from "@holdfast/core/base";
import { automationsFindBySlug, automationVersionsPublishedOne, organisationsIdBySlug, runsFindById } from "@holdfast/core/store";
import { findOrCreateAutomation, GraphCache, type GraphProblem, graphSchema } from "@holdfast/core/versions";
import { ActionRefusedError, fireWaitWords, DraftConflictError, getDraft, InvalidDraftError, publishDraft, publishProblems, saveDraft } from "@holdfast/core/run";
import { changeLifecycle, countRunsToStop, describeLifecycle, fireWaitNow, type LifecycleChange, rerunRun, retryFromFailedStep, stopAllRuns } from "@holdfast/core/run";
import { type Db, inTx } from "@holdfast/db";
import { AdminUsageError } from "./admin";

/**
 * Automations as code: `automations publish` and `automations export`. Publishing goes through the editor's own
 * path (the file becomes the automation's draft, then publishDraft), so every check the editor's Publish makes
 * applies here too; a new automation is made only by findOrCreateAutomation (createAutomation), which gives it its trigger credentials.
 */

/** sysexits(3): the input data was incorrect (a refused graph, a file that is not JSON). */
export const exDataErr = 65;
/** sysexits(3): the input file did not exist or was not readable. */
export const exNoInput = 66;

export interface AutomationsOptions {
  name?: string;
  version?: string;
  reason?: string;
  "hold-deliveries"?: boolean;
  "hold-runs"?: boolean;
  yes?: boolean;
}

/** Who a CLI change is recorded as (the automation's history, run timelines). */
const cliActor = () => `cli:${userInfo().username}`;

const lifecycleSubs = ["pause", "resume", "archive", "restore"] as const;

/** Runs `automations <sub> ...` and returns the exit code; usage mistakes throw AdminUsageError. */
export async function automationsCommand(db: Db, sub: string | undefined, rest: string[], values: AutomationsOptions): Promise<number> {
  if (sub === "publish") {
    const [orgSlug, slug, file] = rest;
    if (!orgSlug || !slug || !file || rest.length !== 3) throw new AdminUsageError("automations publish <org> <slug> <graph.json> [--name N]");
    if (values.version !== undefined) throw new AdminUsageError("--version is for automations export");
    return publishFile(db, orgSlug, slug, file, values.name);
  }
  if (sub === "export") {
    const [orgSlug, slug] = rest;
    if (!orgSlug || !slug || rest.length !== 2) throw new AdminUsageError("automations export <org> <slug> [--version N]");
    let version: number | undefined;
    if (values.version !== undefined) {
      version = Number(values.version);
      if (!/^\d+$/.test(values.version) || !Number.isSafeInteger(version) || version < 1) {
        throw new AdminUsageError("--version is a version number: 1, 2, ...");
      }
    }
    console.log(prettyStable(await exportGraph(db, orgSlug, slug, version)));
    return 0;
  }
  if ((lifecycleSubs as readonly string[]).includes(sub ?? "")) {
    const [orgSlug, slug] = rest;
    const usage = `automations ${sub} <org> <slug>${sub === "pause" ? " [--hold-deliveries] [--hold-runs]" : ""} [--reason TEXT]`;
    if (!orgSlug || !slug || rest.length !== 2) throw new AdminUsageError(usage);
    if (sub !== "pause" && (values["hold-deliveries"] || values["hold-runs"])) throw new AdminUsageError(`--hold-deliveries and --hold-runs are for automations pause`);
    const { orgId, automationId } = await automationIds(db, orgSlug, slug);
    const change: LifecycleChange =
      sub === "pause"
        ? { action: "pause", mode: values["hold-deliveries"] ? "hold" : "refuse", runs: values["hold-runs"] ? "hold" : "continue" }
        : { action: sub as "resume" | "archive" | "restore" };
    const out = await changeLifecycle(db, { orgId, automationId, change, by: cliActor(), reason: values.reason ?? null });
    console.log(`${orgSlug}/${slug}: ${out.changed ? "" : "unchanged, "}${describeLifecycle(out)}`);
    if (out.heldRuns) console.log(`  ${out.heldRuns} running run(s) held before their next step`);
    if (out.releasedRuns) console.log(`  ${out.releasedRuns} held run(s) released`);
    return 0;
  }
  if (sub === "stop-runs") {
    const [orgSlug, slug] = rest;
    const usage = "automations stop-runs <org> <slug> [--version N] --reason TEXT [--yes]";
    if (!orgSlug || !slug || rest.length !== 2 || !values.reason?.trim()) throw new AdminUsageError(usage);
    const version = values.version === undefined ? null : Number(values.version);
    if (version !== null && (!/^\d+$/.test(values.version ?? "") || !Number.isSafeInteger(version) || version < 1)) {
      throw new AdminUsageError("--version is a version number: 1, 2, ...");
    }
    const { orgId, automationId } = await automationIds(db, orgSlug, slug);
    const running = await countRunsToStop(db, orgId, automationId, version);
    const which = `${orgSlug}/${slug}${version === null ? "" : ` version ${version}`}`;
    if (!values.yes) {
      console.log(`${running} run(s) of ${which} are running and would be cancelled. Run again with --yes to stop them.`);
      return 0;
    }
    const out = await stopAllRuns(db, new GraphCache(), { orgId, automationId, version, reason: values.reason, by: cliActor() });
    console.log(`${which}: ${out.cancelled} cancelled, ${out.requested} stop when their outside call settles, ${out.alreadyFinished} had already finished`);
    return 0;
  }
  throw new AdminUsageError(`unknown subcommand "automations ${sub ?? ""}": automations publish|export|pause|resume|archive|restore|stop-runs`);
}

async function publishFile(db: Db, orgSlug: string, slug: string, file: string, name: string | undefined): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "there is no such file" : code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (error as Error).message;
    console.error(`holdfast: cannot read the graph file ${file}: ${why}`);
    return exNoInput;
  }
  let graph: unknown;
  try {
    graph = JSON.parse(text);
  } catch (error) {
    console.error(`holdfast: the graph file ${file} is not JSON: ${(error as Error).message}`);
    return exDataErr;
  }
  const where = `${orgSlug}/${slug}`;
  const org = await orgOf(db, orgSlug);
  // Refused before anything is created (no automation left behind for a graph that can never be published), with
  // the organisation's checks too (connections, approvers); publishDraft checks again below, in its transaction.
  const early = await publishProblems(db, org.id, graph);
  if (early.length) return refused(where, early, graph);
  const automation = await inTx(db, (tx) => findOrCreateAutomation(tx, { orgId: org.id, slug, name: name ?? slug }));

  // The comparison is with the graph as it would be stored: publishing fills in the schema's defaults.
  const latest = await automationVersionsPublishedOne(db, org.id, automation.id);
  if (latest && canonicalJson(latest.graph) === canonicalJson(graphSchema.parse(graph))) {
    console.log(`${where} version ${latest.version} already has this graph; nothing published`);
    return 0;
  }

  const by = `cli:${userInfo().username}`;
  const before = await saveAsDraft(db, org.id, automation.id, graph, by);
  try {
    // The CLI is the operator's, with the database's own credentials: it publishes as an owner would.
    const published = await publishDraft(db, org.id, automation.id, by, "owner");
    // The newest version (published meanwhile by someone else) may already have this graph.
    console.log(published.alreadyPublished ? `${where} version ${published.version} already has this graph; nothing published` : `published ${where} as version ${published.version}`);
    return 0;
  } catch (error) {
    if (error instanceof InvalidDraftError) {
      await restoreDraft(db, org.id, automation.id, before, by);
      return refused(where, error.problems, graph);
    }
    throw error;
  }
}

/** Saves the file's graph as the draft at its current revision; returns the draft it replaced. */
async function saveAsDraft(db: Db, orgId: string, automationId: string, graph: unknown, by: string): Promise<{ graph: unknown; revision: number }> {
  let current = await getDraft(db, orgId, automationId);
  for (let attempt = 0; ; attempt++) {
    try {
      const saved = await saveDraft(db, orgId, automationId, graph, current.revision, by);
      return { graph: current.graph, revision: saved.revision };
    } catch (error) {
      // Someone saved the draft in the editor at this moment: take their revision and save over it.
      if (!(error instanceof DraftConflictError) || attempt >= 2) throw error;
      current = error.current;
    }
  }
}

/** A refused graph leaves the editor's draft as it was, unless someone saved it meanwhile. */
async function restoreDraft(db: Db, orgId: string, automationId: string, before: { graph: unknown; revision: number }, by: string): Promise<void> {
  try {
    await saveDraft(db, orgId, automationId, before.graph, before.revision, by);
  } catch (error) {
    if (!(error instanceof DraftConflictError)) throw error;
  }
}

function refused(where: string, problems: GraphProblem[], graph: unknown): number {
  console.error(`holdfast: ${where} was not published: the graph has ${problems.length === 1 ? "a problem" : `${problems.length} problems`}`);
  for (const p of problems) console.error(describeProblem(p, graph));
  return exDataErr;
}

/**
 * A publish problem in plain words: which node (or edge) and which field. Paths come in three shapes: the zod
 * shape check's `nodes.<index>.config.url` and `edges.<index>.to`, and the structural rules' `node:<id>.config.to`.
 */
export function describeProblem(p: GraphProblem, graph: unknown): string {
  const message = plainMessage(p.message);
  const g = (graph ?? {}) as { nodes?: unknown; edges?: unknown };
  const at = (list: unknown, i: string) => (Array.isArray(list) ? (list[Number(i)] as Record<string, unknown> | undefined) : undefined);
  const field = (rest: string | undefined) => (rest ? ` (${rest})` : "");
  const quoted = (v: unknown, fallback: string) => (typeof v === "string" && v ? `"${v}"` : fallback);

  const byId = /^node:([^.]+)(?:\.(.+))?$/.exec(p.path);
  if (byId) return `node "${byId[1]}"${field(byId[2])}: ${message}`;
  const byIndex = /^nodes\.(\d+)(?:\.(.+))?$/.exec(p.path);
  if (byIndex) {
    const index = byIndex[1] as string;
    return `node ${quoted(at(g.nodes, index)?.id, `#${Number(index) + 1}`)}${field(byIndex[2])}: ${message}`;
  }
  const edge = /^edges\.(\d+)(?:\.(.+))?$/.exec(p.path);
  if (edge) {
    const e = at(g.edges, edge[1] as string);
    return `edge ${quoted(e?.from, "?")} -> ${quoted(e?.to, "?")}${field(edge[2])}: ${message}`;
  }
  return `graph${field(p.path)}: ${message}`;
}

/** zod's wording for an absent field ("expected string, received undefined") says less than "missing". */
function plainMessage(message: string): string {
  const absent = /^Invalid input: expected (.+), received undefined$/.exec(message);
  return absent ? `missing (${absent[1]} expected)` : message;
}

async function exportGraph(db: Db, orgSlug: string, slug: string, version: number | undefined): Promise<unknown> {
  const org = await orgOf(db, orgSlug);
  const automation = await automationsFindBySlug(db, org.id, slug);
  if (!automation) throw new NotFoundError("automation_not_found", `automation "${orgSlug}/${slug}"`);
  const row = await automationVersionsPublishedOne(db, org.id, automation.id, version);
  if (!row) {
    throw new HoldfastError(
      "version_not_found",
      version !== undefined ? `${orgSlug}/${slug} has no published version ${version}` : `${orgSlug}/${slug} has no published version yet`,
    );
  }
  return row.graph;
}

/** Pretty JSON with keys in canonical (sorted) order, so an export diffs cleanly in a repository. */
function prettyStable(value: unknown): string {
  return JSON.stringify(JSON.parse(canonicalJson(value)), null, 2);
}

async function automationIds(db: Db, orgSlug: string, slug: string): Promise<{ orgId: string; automationId: string }> {
  const org = await orgOf(db, orgSlug);
  const automation = await automationsFindBySlug(db, org.id, slug);
  if (!automation) throw new NotFoundError("automation_not_found", `automation "${orgSlug}/${slug}"`);
  return { orgId: org.id, automationId: automation.id };
}

/** The organisation with this slug (its id), or NotFoundError. */
async function orgOf(db: Db, orgSlug: string): Promise<{ id: string }> {
  const id = await organisationsIdBySlug(db, orgSlug);
  if (!id) throw new NotFoundError("org_not_found", `organisation "${orgSlug}"`);
  return { id };
}

/** `runs retry <org> <runId>` (from the failed step, same run) and `runs rerun <org> <runId>` (a new linked run). */
export async function runsRetryCommand(db: Db, sub: "retry" | "rerun", rest: string[]): Promise<number> {
  const [orgSlug, runId] = rest;
  if (!orgSlug || !runId || rest.length !== 2) throw new AdminUsageError(`runs ${sub} <org> <runId>`);
  const org = await orgOf(db, orgSlug);
  if (sub === "retry") {
    const out = await retryFromFailedStep(db, new GraphCache(), { orgId: org.id, runId, by: cliActor() });
    console.log(out.state === "retried" ? `${runId}: retrying from step ${out.nodeId} (same effect key)` : `${runId}: already running again`);
  } else {
    const out = await rerunRun(db, { orgId: org.id, runId, by: cliActor() });
    console.log(`${runId}: ran again as ${out.runId} (version ${out.version})`);
  }
  return 0;
}

/**
 * `runs fire-wait <runId> [--step <nodeId>] --reason T`: the run's wait ends now, as if its time had come (the
 * sweeper's firing; docs/timers.md). Exit 0 when fired, or when it had fired already (what happened is printed:
 * nothing is done twice); 65 when refused (the run is not waiting there, the step is not a wait), with the reason.
 */
export async function runsFireWaitCommand(db: Db, rest: string[], values: { step?: string | undefined; reason?: string | undefined }): Promise<number> {
  const [runId] = rest;
  if (!runId || rest.length !== 1 || !values.reason?.trim()) throw new AdminUsageError('runs fire-wait <runId> [--step <nodeId>] --reason "why"');
  const run = await runsFindById(db, runId);
  if (!run) throw new NotFoundError("run_not_found", `run ${runId}`);
  try {
    const out = await fireWaitNow(db, new GraphCache(), { orgId: run.orgId, runId, nodeId: values.step, by: cliActor(), reason: values.reason });
    console.log(`${runId}: ${fireWaitWords(out)}`);
    return 0;
  } catch (error) {
    if (!(error instanceof ActionRefusedError)) throw error;
    console.error(`holdfast: ${runId}: not fired: ${error.message}`);
    return 65;
  }
}

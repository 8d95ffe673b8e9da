import { HoldfastError } from "@holdfast/core/base";
import { runsFindById, timersOverdue } from "@holdfast/core/store";
import { waitRuleSchema } from "@holdfast/core/versions";
import { recomputeTimers } from "@holdfast/core/run";
import type { Db } from "@holdfast/db";
import { type CommandInput, orgBySlug, UsageError } from "../command-line";

/** `timers recompute|set-zone|set-rule|status`. */
export async function timersCommand(db: Db, input: CommandInput): Promise<void> {
  switch (input.sub) {
    case "recompute":
      return recompute(db, input);
    case "set-zone":
      return setZone(db, input);
    case "set-rule":
      return setRule(db, input);
    case "status": {
      const lag = await timersOverdue(db, 0);
      console.log(`overdue ${lag.overdue}, oldest due ${lag.oldestDueAt?.toISOString() ?? "-"}`);
      return;
    }
    default:
      throw new UsageError(`unknown subcommand "timers ${input.sub ?? ""}"`);
  }
}

const printReport = (report: { checked: number; moved: number }) => console.log(`checked ${report.checked} pending timers, moved ${report.moved}`);

async function recompute(db: Db, { rest, values }: CommandInput): Promise<void> {
  if (rest.length) throw new UsageError("timers recompute [--org slug]");
  const filter = values.org ? { orgId: (await orgBySlug(db, values.org)).id } : {};
  printReport(await recomputeTimers(db, filter));
}

async function setZone(db: Db, { rest }: CommandInput): Promise<void> {
  const [runId, zone] = rest;
  if (!runId || !zone || rest.length !== 2) throw new UsageError("timers set-zone <runId> <zone>");
  const run = await runsFindById(db, runId);
  if (!run) throw new HoldfastError("run_not_found", `run ${runId} not found`);
  printReport(await recomputeTimers(db, { orgId: run.orgId, runId }, zone));
}

async function setRule(db: Db, { rest }: CommandInput): Promise<void> {
  const [runId, json] = rest;
  if (!runId || !json || rest.length !== 2) throw new UsageError("timers set-rule <runId> <json>");
  let rule: unknown;
  try {
    rule = JSON.parse(json);
  } catch {
    throw new UsageError("the rule must be JSON");
  }
  const parsed = waitRuleSchema.safeParse(rule);
  if (!parsed.success) throw new UsageError(`not a wait rule: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  const run = await runsFindById(db, runId);
  if (!run) throw new HoldfastError("run_not_found", `run ${runId} not found`);
  printReport(await recomputeTimers(db, { orgId: run.orgId, runId }, undefined, parsed.data));
}

import { HoldfastError } from "@holdfast/core/base";
import { runEventsForRun, runsFindById, runsNewest, stepsViewOfRun } from "@holdfast/core/store";
import { GraphCache } from "@holdfast/core/versions";
import { requestCancel, startRun } from "@holdfast/core/run";
import type { Db } from "@holdfast/db";
import { createWakePublisher, redisTargetOf } from "@holdfast/queue";
import { z } from "zod";
import { runsFireWaitCommand, runsRetryCommand } from "../automations";
import { asUsage, type CommandInput, one, orgBySlug, UsageError } from "../command-line";

/** `runs list|show|start|cancel|retry|rerun|fire-wait`. */
export async function runsCommand(db: Db, input: CommandInput): Promise<void> {
  const { sub, rest, values } = input;
  switch (sub) {
    case "list":
      return list(db, input);
    case "show":
      return show(db, one(rest, "runs show <runId>"));
    case "start":
      return start(db, input);
    case "retry":
    case "rerun":
      process.exitCode = await asUsage(() => runsRetryCommand(db, sub, rest));
      return;
    case "fire-wait":
      process.exitCode = await asUsage(() => runsFireWaitCommand(db, rest, values));
      return;
    case "cancel":
      return cancel(db, one(rest, "runs cancel <runId>"), values.reason);
    default:
      throw new UsageError(`unknown subcommand "runs ${sub ?? ""}"`);
  }
}

async function list(db: Db, { values }: CommandInput): Promise<void> {
  const limit = z.coerce.number().int().min(1).max(1000).parse(values.limit ?? 20);
  const runs = await runsNewest(db, values.org ? (await orgBySlug(db, values.org)).id : null, limit);
  for (const r of runs) console.log(`${r.id}  ${r.status.padEnd(9)}  ${r.createdAt.toISOString()}  ${r.startKey}`);
}

async function findRun(db: Db, runId: string) {
  const run = await runsFindById(db, runId);
  if (!run) throw new HoldfastError("run_not_found", `run ${runId} not found`);
  return run;
}

/** The run, its steps and its timeline. */
async function show(db: Db, runId: string): Promise<void> {
  const run = await findRun(db, runId);
  console.log(`run ${run.id}  status ${run.status}  started ${run.createdAt.toISOString()}`);
  if (run.error) console.log(`error: ${JSON.stringify(run.error)}`);
  const steps = await stepsViewOfRun(db, run.orgId, runId);
  for (const s of steps) {
    console.log(`  step ${s.nodeId}#${s.iteration}  ${s.status}  attempt ${s.attempt}/${s.maxAttempts}  lane ${s.lane}`);
  }
  console.log("timeline:");
  for (const e of await runEventsForRun(db, run.orgId, runId)) {
    const where = [e.nodeId, e.attempt != null ? `attempt ${e.attempt}` : null, e.lane, e.worker].filter(Boolean).join("  ");
    console.log(`  ${e.at.toISOString()}  ${e.type.padEnd(22)} ${where}${e.data ? `  ${JSON.stringify(e.data)}` : ""}`);
  }
}

/** A run started as a webhook delivery with webhook-id `--key` would start it. */
async function start(db: Db, { rest, values, env }: CommandInput): Promise<void> {
  const [orgSlug, automationSlug] = rest;
  if (!orgSlug || !automationSlug || rest.length !== 2 || !values.key) {
    throw new UsageError("runs start <org> <automation> --key <eventId> [--input JSON]");
  }
  let body: unknown = {};
  try {
    body = values.input ? JSON.parse(values.input) : {};
  } catch {
    throw new UsageError("--input must be JSON");
  }
  // The run's first steps are announced on Redis, as the web's starts are (queue/wake.ts); a Redis that does
  // not answer within a second leaves them to the outbox trigger's NOTIFY.
  const wake = env.WAKEUPS === "redis" ? createWakePublisher({ redis: redisTargetOf(env), prefix: env.QUEUE_PREFIX, onError: () => {} }) : undefined;
  try {
    const connected = (await wake?.whenConnected(1_000)) ?? false;
    const outcome = await startRun(
      db,
      {
        orgSlug,
        automationSlug,
        rawBody: values.input ?? "{}",
        body,
        headers: { "webhook-id": values.key, "webhook-timestamp": null, "webhook-signature": null },
        via: "cli",
        auth: { kind: "operator" },
      },
      wake && connected ? { wake } : {},
    );
    console.log(JSON.stringify(outcome));
  } finally {
    await wake?.close();
  }
}

async function cancel(db: Db, runId: string, reason: string | undefined): Promise<void> {
  const run = await findRun(db, runId);
  const outcome = await requestCancel(db, new GraphCache(), run.orgId, runId, reason ?? "cancelled from the CLI", "cli");
  console.log(JSON.stringify(outcome));
}

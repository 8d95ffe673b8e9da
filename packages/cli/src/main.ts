#!/usr/bin/env -S npx tsx
import { parseArgs } from "node:util";
import {
  checkSecretKey,
  GraphCache,
  initSecretKey,
  HoldfastError,
  loadEnv,
  organisationsIdBySlug,
  recomputeTimers,
  repairAll,
  requestCancel,
  runChecks,
  runEventsForRun,
  runsFindById,
  runsNewest,
  startRun,
  stepsViewOfRun,
  timersOverdue,
  waitRuleSchema,
} from "@holdfast/core";
import { createDb, ensureDatabase, migrate, setRolePasswords, urlAsRole } from "@holdfast/db";
import { createWakePublisher } from "@holdfast/queue";
import { z } from "zod";
import { AdminUsageError, budgetsCommand, connectionsCommand, contactsCommand, signalsCommand, usersCommand } from "./admin";
import { automationsCommand, runsFireWaitCommand, runsRetryCommand } from "./automations";
import { cliEnv } from "./env-schema";
import { databaseFailure, unexpectedFailure } from "./failure";
import { hooksCommand } from "./hooks";
import { seedDemo } from "./seed";
import { setPasswordCommand } from "./users";

const usage = `usage: holdfast <command> [options]

commands:
  key init                        generate the secret key file if there is no key (pnpm start runs this)
  migrate                         create the database if needed and apply migrations
  seed                            on an empty database: the demo organisation "demo", its automation "demo-follow-up"
                                  and its owner demo@holdfast.local with a random password (printed once)
  hooks url <org> <automation>    the trigger URL (with its token in url_token mode)
  hooks secret <org> <automation> [--rotate]
                                  the signing secret; --rotate makes a new one (the old one works for 24 more hours)
  runs list [--org demo] [--limit 20]
  runs show <runId>               the run's timeline
  runs start <org> <automation> --key <eventId> [--input '{"plan":"pro"}']
                                  start a run as a webhook delivery with webhook-id <eventId> would
  runs cancel <runId> [--reason text]
  timers recompute [--org slug]   recompute every pending timer from its rule and zone (after a tz database update)
  timers set-zone <runId> <zone>  the contact moved: recompute that run's pending timers in the new IANA zone
  timers set-rule <runId> <json>  a run's pending wait gets a new rule, e.g. '{"kind":"duration","seconds":3600}'
  timers status                   overdue timers and the oldest due instant (the sweep's lag)
  connections add <org> <smtp|crm|model|slack> <name> --config JSON [--limits JSON] [--secret-env VAR]
  connections reconnect <org> <name> --secret-env VAR
                                  new secret; every step parked on the connection resumes
  connections show <org> <name>   settings, status, breaker (never the secret)
  budgets show <org> | budgets set <org> <USD>   (model spend)
  budgets runs <org> [automation] [--max-steps N] [--max-age-seconds S]   run budgets for new runs
                                  the organisation's model budget; raising it resumes parked drafts
  contacts unsubscribe <org> <email> | contacts erase <org> <email>
  contacts set-zone <org> <email> <zone|none>   the contact moved: its pending waits are recomputed in the new zone
  signals email <org> --input JSON
                                  an inbound email (messageId, from, subject, inReplyTo, references, text)
  doctor [--repair] [--json]      the silent-failure checks (stuck waits, overdue timers, lapsed leases, lost wake-ups,
                                  runs with no way forward...); --repair re-wakes what can be re-woken safely
  users add <org> <email> --name NAME --role owner|editor|approver|viewer [--password-env VAR] [--slack-user U...]
  users remove <org> <email>      takes the user's access away (their decisions are refused from then on)
  users password <email> [--password-env VAR]
                                  a new password (from VAR, or generated and printed); signs the user out everywhere
  automations publish <org> <slug> <graph.json> [--name N]   create if missing; publish when the graph changed (exit 65: refused)
  automations export <org> <slug> [--version N]              the newest (or version N) published graph as JSON
  automations pause <org> <slug> [--hold-deliveries] [--hold-runs] [--reason T]
                                  paused: deliveries refused with 503 + Retry-After (or accepted and held); running runs
                                  continue (or hold before their next step)
  automations resume|archive|restore <org> <slug>             resume releases held runs; archived refuses deliveries (410)
  automations stop-runs <org> <slug> [--version N] --reason T [--yes]   counts, then (--yes) cancels each running run
  runs retry <org> <runId>        a failed run again from its failed step (same run, same effect key)
  runs rerun <org> <runId>        a new run with the same input on the newest version, linked to this one
  runs fire-wait <runId> [--step <nodeId>] --reason T   the run's wait ends now, as if its time had come (once, however
                                  often asked: a repeat prints when and by whom it fired); exit 65 when refused

environment: DATABASE_URL, MIGRATE_DATABASE_URL (migrate), HOLDFAST_SECRET_KEY or HOLDFAST_SECRET_KEY_FILE, PORT,
HOLDFAST_PUBLIC_URL, DEMO_ECHO_URL (see .env.example)`;

class UsageError extends Error {}

/** The commands the usage lists: anything else is a usage error before the environment or a database is touched. */
const commands = new Set(["key", "migrate", "seed", "hooks", "runs", "timers", "connections", "budgets", "contacts", "signals", "doctor", "users", "automations"]);

// Help is an answer, not a usage error: the usage on stdout and exit 0, before the environment or a database is needed.
const argv = process.argv.slice(2);
if (argv[0] === "help" || argv.some((a) => a === "--help" || a === "-h")) {
  console.log(usage);
  process.exit(0);
}

const env = loadEnv(cliEnv);

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      org: { type: "string" },
      limit: { type: "string" },
      key: { type: "string" },
      input: { type: "string" },
      reason: { type: "string" },
      step: { type: "string" },
      config: { type: "string" },
      limits: { type: "string" },
      "secret-env": { type: "string" },
      name: { type: "string" },
      role: { type: "string" },
      "password-env": { type: "string" },
      "slack-user": { type: "string" },
      "max-steps": { type: "string" },
      "max-age-seconds": { type: "string" },
      version: { type: "string" },
      repair: { type: "boolean" },
      "hold-deliveries": { type: "boolean" },
      "hold-runs": { type: "boolean" },
      yes: { type: "boolean" },
      rotate: { type: "boolean" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, sub, ...rest] = positionals;
  if (!command) throw new UsageError();
  if (!commands.has(command)) throw new UsageError(`unknown command "${command}"`);

  if (command === "migrate") {
    const migrateUrl = env.MIGRATE_DATABASE_URL ?? urlAsRole(env.DATABASE_URL, "postgres");
    const created = await ensureDatabase(migrateUrl);
    const result = await migrate(migrateUrl);
    console.log(
      `${created ? "created database; " : ""}applied ${result.applied.length}, already applied ${result.skipped.length}; ` +
        `stored functions from their files: ${result.functions.length}`,
    );
    for (const name of result.applied) console.log(`  + ${name}`);
    const passwords = await setRolePasswords(migrateUrl, [env.DATABASE_URL, ...(env.WEB_DATABASE_URL ? [env.WEB_DATABASE_URL] : [])]);
    if (passwords.length) console.log(`set the password of ${passwords.join(", ")} from the configured URLs`);
    return;
  }

  if (command === "key") {
    if (sub !== "init" || rest.length) throw new UsageError("key init");
    const key = initSecretKey();
    if (!key.path) console.log("using HOLDFAST_SECRET_KEY from the environment");
    else if (key.created) {
      console.log(`generated the secret key: ${key.path} (readable by you only)`);
      console.log("  back it up: connection secrets in the database cannot be read without it");
    } else console.log(`using the secret key in ${key.path}`);
    return;
  }

  const db = createDb(env.DATABASE_URL, { poolSize: 2, applicationName: "holdfast-cli" });
  try {
    // Like every process: refuse to work with no key, or with a key that is not the database's.
    await checkSecretKey(db);
    if (command === "seed") {
      if (sub !== undefined) throw new UsageError("seed");
      await seedDemo(db, { echoUrl: env.DEMO_ECHO_URL, publicUrl: env.HOLDFAST_PUBLIC_URL });
      return;
    }
    if (command === "hooks") {
      const [orgSlug, automationSlug] = rest;
      if (!orgSlug || !automationSlug || rest.length !== 2) throw new UsageError("hooks url|secret <org> <automation> [--rotate]");
      await hooksCommand(db, { sub, orgSlug, automationSlug, rotate: values.rotate === true, publicUrl: env.HOLDFAST_PUBLIC_URL });
      return;
    }
    if (command === "users" && sub === "password") {
      const [email] = rest;
      if (!email || rest.length !== 1) throw new UsageError("users password <email> [--password-env VAR]");
      await setPasswordCommand(db, email, values["password-env"]);
      return;
    }
    if (command === "signals") {
      const [orgSlug] = rest;
      if (!orgSlug || rest.length !== 1) throw new UsageError("signals email <org> --input JSON");
      try {
        await signalsCommand(db, orgSlug, sub, values.input);
      } catch (error) {
        if (error instanceof AdminUsageError) throw new UsageError(error.message);
        throw error;
      }
      return;
    }
    if (command === "connections" || command === "budgets" || command === "contacts" || command === "users") {
      const [orgSlug, ...args] = rest;
      if (!orgSlug) throw new UsageError(`${command} ${sub ?? "<subcommand>"} <org> ...`);
      const orgId = (await orgBySlug(db, orgSlug)).id;
      try {
        if (command === "connections") await connectionsCommand(db, orgId, sub, args, values);
        else if (command === "budgets") await budgetsCommand(db, orgId, sub, args, values);
        else if (command === "users") await usersCommand(db, orgId, sub, args, values);
        else await contactsCommand(db, orgId, sub, args);
      } catch (error) {
        if (error instanceof AdminUsageError) throw new UsageError(error.message);
        throw error;
      }
      return;
    }
    if (command === "timers") {
      switch (sub) {
        case "recompute": {
          if (rest.length) throw new UsageError("timers recompute [--org slug]");
          const filter = values.org ? { orgId: (await orgBySlug(db, values.org)).id } : {};
          const report = await recomputeTimers(db, filter);
          console.log(`checked ${report.checked} pending timers, moved ${report.moved}`);
          return;
        }
        case "set-zone": {
          const [runId, zone] = rest;
          if (!runId || !zone || rest.length !== 2) throw new UsageError("timers set-zone <runId> <zone>");
          const run = await runsFindById(db, runId);
          if (!run) throw new HoldfastError("run_not_found", `run ${runId} not found`);
          const report = await recomputeTimers(db, { orgId: run.orgId, runId }, zone);
          console.log(`checked ${report.checked} pending timers, moved ${report.moved}`);
          return;
        }
        case "set-rule": {
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
          const report = await recomputeTimers(db, { orgId: run.orgId, runId }, undefined, parsed.data);
          console.log(`checked ${report.checked} pending timers, moved ${report.moved}`);
          return;
        }
        case "status": {
          const lag = await timersOverdue(db, 0);
          console.log(`overdue ${lag.overdue}, oldest due ${lag.oldestDueAt?.toISOString() ?? "-"}`);
          return;
        }
        default:
          throw new UsageError(`unknown subcommand "timers ${sub ?? ""}"`);
      }
    }
    if (command === "automations") {
      try {
        process.exitCode = await automationsCommand(db, sub, rest, values);
      } catch (error) {
        if (error instanceof AdminUsageError) throw new UsageError(error.message);
        throw error;
      }
      return;
    }
    if (command === "doctor") {
      if (sub !== undefined) throw new UsageError("doctor [--repair] [--json]");
      const before = await runChecks(db, 5);
      const repaired = values.repair ? await repairAll(db, new GraphCache(), "doctor") : null;
      if (values.json) {
        console.log(JSON.stringify({ findings: before, repaired }, null, 2));
      } else {
        for (const f of before) {
          console.log(`${f.count === 0 ? "ok  " : "FIND"}  ${f.check.padEnd(22)} ${String(f.count).padStart(6)}${f.count ? `  repair: ${f.repair}` : ""}`);
          for (const e of f.examples) console.log(`        ${e.runId}  ${e.detail}`);
        }
        if (repaired) console.log(`repaired: ${Object.entries(repaired).map(([k, v]) => `${k} ${v}`).join(", ")}`);
        else if (before.some((f) => f.count > 0)) console.log("run with --repair to re-wake what can be re-woken safely");
      }
      process.exitCode = before.some((f) => f.count > 0) && !repaired ? 1 : 0;
      return;
    }
    if (command !== "runs") throw new UsageError(`unknown command "${command}"`);
    switch (sub) {
      case "list": {
        const limit = z.coerce.number().int().min(1).max(1000).parse(values.limit ?? 20);
        const runs = await runsNewest(db, values.org ? (await orgBySlug(db, values.org)).id : null, limit);
        for (const r of runs) console.log(`${r.id}  ${r.status.padEnd(9)}  ${r.createdAt.toISOString()}  ${r.startKey}`);
        return;
      }
      case "show": {
        const runId = one(rest, "runs show <runId>");
        const run = await runsFindById(db, runId);
        if (!run) throw new HoldfastError("run_not_found", `run ${runId} not found`);
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
        return;
      }
      case "start": {
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
        const wake = env.WAKEUPS === "redis" ? createWakePublisher({ redisUrl: env.REDIS_URL, prefix: env.QUEUE_PREFIX, onError: () => {} }) : undefined;
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
        return;
      }
      case "retry":
      case "rerun":
        try {
          process.exitCode = await runsRetryCommand(db, sub, rest);
        } catch (error) {
          if (error instanceof AdminUsageError) throw new UsageError(error.message);
          throw error;
        }
        return;
      case "fire-wait":
        try {
          process.exitCode = await runsFireWaitCommand(db, rest, values);
        } catch (error) {
          if (error instanceof AdminUsageError) throw new UsageError(error.message);
          throw error;
        }
        return;
      case "cancel": {
        const runId = one(rest, "runs cancel <runId>");
        const run = await runsFindById(db, runId);
        if (!run) throw new HoldfastError("run_not_found", `run ${runId} not found`);
        const outcome = await requestCancel(db, new GraphCache(), run.orgId, runId, values.reason ?? "cancelled from the CLI", "cli");
        console.log(JSON.stringify(outcome));
        return;
      }
      default:
        throw new UsageError(`unknown subcommand "runs ${sub ?? ""}"`);
    }
  } finally {
    await db.$disconnect();
  }
}

function one(rest: string[], shape: string): string {
  if (rest.length !== 1 || !rest[0]) throw new UsageError(shape);
  return rest[0];
}

async function orgBySlug(db: ReturnType<typeof createDb>, slug: string): Promise<{ id: string }> {
  const id = await organisationsIdBySlug(db, slug);
  if (!id) throw new HoldfastError("org_not_found", `organisation "${slug}" not found`);
  return { id };
}

main(argv).then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      if (error instanceof Error && error.message) console.error(`holdfast: ${error.message}\n`);
      console.error(usage);
      process.exit(64);
    }
    if (error instanceof HoldfastError && error.code === "secret_key") {
      console.error(`holdfast: ${error.message}`);
      process.exit(78);
    }
    const unavailable = databaseFailure(error, argv[0] === "migrate" ? (env.MIGRATE_DATABASE_URL ?? env.DATABASE_URL) : env.DATABASE_URL);
    if (unavailable) {
      console.error(`holdfast: ${unavailable.message}`);
      process.exit(unavailable.exitCode);
    }
    console.error(`holdfast: ${unexpectedFailure(error)}`);
    if (env.HOLDFAST_DEBUG === "1") console.error(error);
    process.exit(1);
  },
);

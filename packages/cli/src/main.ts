#!/usr/bin/env -S npx tsx
import { HoldfastError, loadEnv } from "@holdfast/core/base";
import { checkSecretKey } from "@holdfast/core/store";
import { createDb } from "@holdfast/db";
import { type CommandInput, type DbCommand, parseCommandLine, UsageError } from "./command-line";
import { automationsCommandLine } from "./commands/automations";
import { doctorCommand } from "./commands/doctor";
import {
  budgetsCommandLine,
  connectionsCommandLine,
  contactsCommandLine,
  hooksCommandLine,
  seedCommand,
  signalsCommandLine,
  usersCommandLine,
} from "./commands/organisation";
import { restoreCommand } from "./commands/restore";
import { runsCommand } from "./commands/runs";
import { keyCheckCommand, keyCommand, migrateCommand } from "./commands/setup";
import { timersCommand } from "./commands/timers";
import { cliEnv } from "./env-schema";
import { databaseFailure, unexpectedFailure } from "./failure";

const usage = `usage: holdfast <command> [options]

commands:
  key init                        generate the secret key file if there is no key (pnpm start runs this)
  key check                       the key is this database's (a new database records it); exit 78 otherwise
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
  restore reconcile --point T --latest URL [--json]
                                  after a point-in-time restore (DATABASE_URL): carry what happened after the point
                                  (effects, sent messages, suppressions) from a copy replayed to the archive's end

environment: DATABASE_URL, MIGRATE_DATABASE_URL (migrate), HOLDFAST_SECRET_KEY or HOLDFAST_SECRET_KEY_FILE, PORT,
HOLDFAST_PUBLIC_URL, DEMO_ECHO_URL (see .env.example)`;

/** The commands that need no database. */
const withoutDatabase: Record<string, (input: CommandInput) => Promise<void>> = { key: keyCommand, migrate: migrateCommand };

/** The commands that work on the database, each in its module under commands/. */
const withDatabase: Record<string, DbCommand> = {
  key: keyCheckCommand,
  seed: seedCommand,
  hooks: hooksCommandLine,
  runs: runsCommand,
  timers: timersCommand,
  connections: connectionsCommandLine,
  budgets: budgetsCommandLine,
  contacts: contactsCommandLine,
  signals: signalsCommandLine,
  doctor: doctorCommand,
  users: usersCommandLine,
  automations: automationsCommandLine,
  restore: restoreCommand,
};

// Help is an answer, not a usage error: the usage on stdout and exit 0, before the environment or a database is needed.
const argv = process.argv.slice(2);
if (argv[0] === "help" || argv.some((a) => a === "--help" || a === "-h")) {
  console.log(usage);
  process.exit(0);
}

const env = loadEnv(cliEnv);

/** Anything the usage does not list is a usage error before a database is touched. */
async function main(argv: string[]): Promise<void> {
  const { command, sub, rest, values } = parseCommandLine(argv);
  if (!command) throw new UsageError();
  const input: CommandInput = { sub, rest, values, env };
  // `key check` needs the database (the check below is all it does); `key init` does not.
  const local = Object.hasOwn(withoutDatabase, command) && !(command === "key" && sub === "check") ? withoutDatabase[command] : undefined;
  if (local) return local(input);
  const run = Object.hasOwn(withDatabase, command) ? withDatabase[command] : undefined;
  if (!run) throw new UsageError(`unknown command "${command}"`);
  const db = createDb(env.DATABASE_URL, { poolSize: 2, applicationName: "holdfast-cli", poolMode: env.DATABASE_POOL_MODE });
  try {
    // Like every process: refuse to work with no key, or with a key that is not the database's.
    await checkSecretKey(db);
    await run(db, input);
  } finally {
    await db.$disconnect();
  }
}

main(argv).then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      if (error instanceof Error && error.message) console.error(`holdfast: ${error.message}\n`);
      console.error(usage);
      process.exit(64);
    }
    if (error instanceof HoldfastError && (error.code === "secret_key" || error.code === "settings")) {
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

import { parseArgs } from "node:util";
import { HoldfastError } from "@holdfast/core/base";
import { organisationsIdBySlug } from "@holdfast/core/store";
import type { Db } from "@holdfast/db";
import type { z } from "zod";
import { AdminUsageError } from "./admin";
import type { cliEnv } from "./env-schema";

/** A command line that does not match the usage: the usage on stderr and exit 64. */
export class UsageError extends Error {}

/** Every flag of every command: parsing is strict, so a flag no command knows is a usage error. */
const options = {
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
  latest: { type: "string" },
  point: { type: "string" },
  repair: { type: "boolean" },
  "hold-deliveries": { type: "boolean" },
  "hold-runs": { type: "boolean" },
  yes: { type: "boolean" },
  rotate: { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** `holdfast <command> <sub> <rest...> --flags`. */
export function parseCommandLine(argv: string[]) {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, strict: true, options });
  const [command, sub, ...rest] = positionals;
  return { command, sub, rest, values };
}

export type CliEnv = z.output<typeof cliEnv>;

/** What a command gets: its subcommand, the positionals after it, the flags and the environment. */
export interface CommandInput {
  sub: string | undefined;
  rest: string[];
  values: ReturnType<typeof parseCommandLine>["values"];
  env: CliEnv;
}

/** A command that works on the database (opened, key-checked and closed by main). */
export type DbCommand = (db: Db, input: CommandInput) => Promise<void>;

/** The single positional a command takes, or a usage error showing its shape. */
export function one(rest: string[], shape: string): string {
  if (rest.length !== 1 || !rest[0]) throw new UsageError(shape);
  return rest[0];
}

export async function orgBySlug(db: Db, slug: string): Promise<{ id: string }> {
  const id = await organisationsIdBySlug(db, slug);
  if (!id) throw new HoldfastError("org_not_found", `organisation "${slug}" not found`);
  return { id };
}

/** The admin modules report usage mistakes as AdminUsageError; the CLI answers them like its own. */
export async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AdminUsageError) throw new UsageError(error.message);
    throw error;
  }
}

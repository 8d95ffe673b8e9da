import type { Db } from "@holdfast/db";
import { budgetsCommand, connectionsCommand, contactsCommand, signalsCommand, usersCommand } from "../admin";
import { asUsage, type CommandInput, orgBySlug, UsageError } from "../command-line";
import { hooksCommand } from "../hooks";
import { seedDemo } from "../seed";
import { setPasswordCommand } from "../users";

/** `seed`: the demo organisation on an empty database. */
export async function seedCommand(db: Db, { sub, env }: CommandInput): Promise<void> {
  if (sub !== undefined) throw new UsageError("seed");
  await seedDemo(db, { echoUrl: env.DEMO_ECHO_URL, publicUrl: env.HOLDFAST_PUBLIC_URL });
}

/** `hooks url|secret <org> <automation> [--rotate]`. */
export async function hooksCommandLine(db: Db, { sub, rest, values, env }: CommandInput): Promise<void> {
  const [orgSlug, automationSlug] = rest;
  if (!orgSlug || !automationSlug || rest.length !== 2) throw new UsageError("hooks url|secret <org> <automation> [--rotate]");
  await hooksCommand(db, { sub, orgSlug, automationSlug, rotate: values.rotate === true, publicUrl: env.HOLDFAST_PUBLIC_URL });
}

/** `signals email <org> --input JSON`. */
export async function signalsCommandLine(db: Db, { sub, rest, values }: CommandInput): Promise<void> {
  const [orgSlug] = rest;
  if (!orgSlug || rest.length !== 1) throw new UsageError("signals email <org> --input JSON");
  await asUsage(() => signalsCommand(db, orgSlug, sub, values.input));
}

/** `users password <email>` works across organisations; every other `users` subcommand names one. */
export async function usersCommandLine(db: Db, input: CommandInput): Promise<void> {
  if (input.sub !== "password") return inOrganisation("users", db, input);
  const [email] = input.rest;
  if (!email || input.rest.length !== 1) throw new UsageError("users password <email> [--password-env VAR]");
  await setPasswordCommand(db, email, input.values["password-env"]);
}

export const connectionsCommandLine = (db: Db, input: CommandInput) => inOrganisation("connections", db, input);
export const budgetsCommandLine = (db: Db, input: CommandInput) => inOrganisation("budgets", db, input);
export const contactsCommandLine = (db: Db, input: CommandInput) => inOrganisation("contacts", db, input);

/** `<command> <sub> <org> ...`: the organisation is looked up before the command's own checks. */
async function inOrganisation(command: "connections" | "budgets" | "contacts" | "users", db: Db, { sub, rest, values }: CommandInput): Promise<void> {
  const [orgSlug, ...args] = rest;
  if (!orgSlug) throw new UsageError(`${command} ${sub ?? "<subcommand>"} <org> ...`);
  const orgId = (await orgBySlug(db, orgSlug)).id;
  await asUsage(async () => {
    if (command === "connections") await connectionsCommand(db, orgId, sub, args, values);
    else if (command === "budgets") await budgetsCommand(db, orgId, sub, args, values);
    else if (command === "users") await usersCommand(db, orgId, sub, args, values);
    else await contactsCommand(db, orgId, sub, args);
  });
}

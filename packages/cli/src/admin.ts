import { HoldfastError } from "@holdfast/core/base";
import { budgetsOf, budgetsSetAllowed, connectionsByName, contactsIdByEmail, contactsUnsubscribe } from "@holdfast/core/store";
import { GraphCache } from "@holdfast/core/versions";
import { connectionLimits, createConnection, reconnectConnection } from "@holdfast/core/providers";
import { inboundEmail, ingestEmailReply, removeMember, upsertMember } from "@holdfast/core/people";
import { eraseContact, setContactZone, setRunBudgets } from "@holdfast/core/run";
import type { Db } from "@holdfast/db";
import { z } from "zod";

/** Operators' commands for issue 5 and 6 state: connections, model budgets, contacts. Secrets only from the env. */
export class AdminUsageError extends Error {}

export interface AdminOptions {
  config?: string;
  limits?: string;
  "secret-env"?: string;
  name?: string;
  role?: string;
  "password-env"?: string;
  "slack-user"?: string;
  "max-steps"?: string;
  "max-age-seconds"?: string;
}

const json = (raw: string | undefined, what: string): unknown => {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new AdminUsageError(`${what} must be JSON`);
  }
};

function secretFrom(values: AdminOptions): string | null {
  const name = values["secret-env"];
  if (!name) return null;
  const secret = process.env[name];
  if (!secret) throw new AdminUsageError(`environment variable ${name} is empty: the secret is read from it, never from the command line`);
  return secret;
}

export async function connectionsCommand(db: Db, orgId: string, sub: string | undefined, rest: string[], values: AdminOptions): Promise<void> {
  switch (sub) {
    case "add": {
      const [kind, name] = rest;
      const kinds = z.enum(["smtp", "crm", "model", "slack"]);
      if (!kind || !name || rest.length !== 2 || !kinds.safeParse(kind).success) {
        throw new AdminUsageError("connections add <org> <smtp|crm|model|slack> <name> --config JSON [--limits JSON] [--secret-env VAR]");
      }
      const config = json(values.config, "--config") ?? {};
      const limits = connectionLimits.safeParse(json(values.limits, "--limits") ?? {});
      if (!limits.success) throw new AdminUsageError(`--limits: ${limits.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
      const id = await createConnection(db, { orgId, kind: kinds.parse(kind), name, config: config as Record<string, unknown>, secret: secretFrom(values), limits: limits.data });
      console.log(`connection ${name} (${kind}) added: ${id}`);
      return;
    }
    case "reconnect": {
      const [name] = rest;
      const secret = secretFrom(values);
      if (!name || rest.length !== 1 || secret === null) throw new AdminUsageError("connections reconnect <org> <name> --secret-env VAR");
      const row = await connectionsByName(db, orgId, name);
      if (!row) throw new HoldfastError("connection_not_found", `connection "${name}" not found`);
      const resumed = await reconnectConnection(db, orgId, row.id, secret, "cli");
      console.log(`connection ${name} reconnected; ${resumed} parked steps resumed`);
      return;
    }
    case "show": {
      const [name] = rest;
      if (!name || rest.length !== 1) throw new AdminUsageError("connections show <org> <name>");
      const row = await connectionsByName(db, orgId, name);
      if (!row) throw new HoldfastError("connection_not_found", `connection "${name}" not found`);
      const { secret, ...shown } = row;
      console.log(JSON.stringify({ ...shown, secret: secret ? "(set, encrypted)" : null }, null, 2));
      return;
    }
    default:
      throw new AdminUsageError(`unknown subcommand "connections ${sub ?? ""}"`);
  }
}

export async function budgetsCommand(db: Db, orgId: string, sub: string | undefined, rest: string[], values: AdminOptions = {}): Promise<void> {
  if (sub === "runs" && rest.length <= 1) {
    const positive = z.coerce.number().int().min(1).max(2_000_000_000);
    const steps = values["max-steps"] === undefined ? undefined : positive.safeParse(values["max-steps"]);
    const age = values["max-age-seconds"] === undefined ? undefined : positive.safeParse(values["max-age-seconds"]);
    if (steps?.success === false || age?.success === false) throw new AdminUsageError("--max-steps and --max-age-seconds take whole numbers of 1 or more");
    const set = await setRunBudgets(db, orgId, rest[0] ?? null, {
      ...(steps?.success ? { maxSteps: steps.data } : {}),
      ...(age?.success ? { maxAgeSeconds: age.data } : {}),
    });
    console.log(`run budgets for new runs of ${rest[0] ?? "the organisation"}: max steps ${set.maxSteps ?? "(organisation's)"}, max age ${set.maxAgeSeconds ?? "(organisation's)"} s`);
    return;
  }
  if (sub === "show" && rest.length === 0) {
    const b = await budgetsOf(db, orgId);
    console.log(b ? `allowed ${b.allowedMicros / 1e6} USD, reserved ${b.reservedMicros / 1e6}, spent ${b.spentMicros / 1e6}` : "no model budget set");
    return;
  }
  if (sub === "set" && rest.length === 1) {
    const usd = z.coerce.number().min(0).max(1e9).safeParse(rest[0]);
    if (!usd.success) throw new AdminUsageError("budgets set <org> <USD>: a number of US dollars");
    const resumed = await budgetsSetAllowed(db, orgId, Math.round(usd.data * 1e6), "cli");
    console.log(`model budget set to ${usd.data} USD; ${resumed} parked steps resumed`);
    return;
  }
  throw new AdminUsageError("budgets show <org> | budgets set <org> <USD> | budgets runs <org> [automation] [--max-steps N] [--max-age-seconds S]");
}

export async function contactsCommand(db: Db, orgId: string, sub: string | undefined, rest: string[]): Promise<void> {
  if (sub === "set-zone") {
    const [address, zone] = rest;
    if (!address || !zone || rest.length !== 2) throw new AdminUsageError("contacts set-zone <org> <email> <IANA zone|none>");
    const contactId = await contactsIdByEmail(db, orgId, address);
    if (!contactId) throw new HoldfastError("contact_not_found", `no contact ${address} in this organisation`);
    const r = await setContactZone(db, orgId, contactId, zone === "none" ? null : zone, "cli");
    console.log(r.changed ? `${address}: time zone ${r.oldZone ?? "none"} -> ${r.zone ?? "none"}; ${r.moved} pending waits recomputed` : `${address} already has that time zone`);
    return;
  }
  const [email] = rest;
  if (!email || rest.length !== 1 || !/^[^\s@]+@[^\s@]+$/.test(email)) throw new AdminUsageError("contacts unsubscribe|erase <org> <email> | contacts set-zone <org> <email> <zone>");
  if (sub === "unsubscribe") {
    await contactsUnsubscribe(db, orgId, email);
    console.log(`${email} unsubscribed and suppressed`);
    return;
  }
  if (sub === "erase") {
    console.log(JSON.stringify(await eraseContact(db, new GraphCache(), orgId, email, "cli")));
    return;
  }
  throw new AdminUsageError(`unknown subcommand "contacts ${sub ?? ""}"`);
}

/** `signals email <org> --input JSON`: hands an inbound email to the engine as the webhook does (operators, tests). */
export async function signalsCommand(db: Db, orgSlug: string, sub: string | undefined, input: string | undefined): Promise<void> {
  if (sub !== "email") throw new AdminUsageError("signals email <org> --input JSON");
  const email = inboundEmail.safeParse(json(input, "--input"));
  if (!email.success) throw new AdminUsageError(`--input: ${email.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`);
  console.log(JSON.stringify(await ingestEmailReply(db, orgSlug, email.data)));
}

const roles = z.enum(["owner", "editor", "approver", "viewer"]);

/** People: a user's membership and role in one organisation (passwords only from the environment). */
export async function usersCommand(db: Db, orgId: string, sub: string | undefined, rest: string[], values: AdminOptions): Promise<void> {
  const [email] = rest;
  const emailOk = email !== undefined && rest.length === 1 && z.string().email().safeParse(email).success;
  switch (sub) {
    case "add": {
      const role = roles.safeParse(values.role);
      if (!emailOk || !role.success || !values.name) {
        throw new AdminUsageError("users add <org> <email> --name NAME --role owner|editor|approver|viewer [--password-env VAR] [--slack-user U...]");
      }
      const passwordVar = values["password-env"];
      const password = passwordVar ? process.env[passwordVar] : undefined;
      if (passwordVar && (!password || password.length < 10)) throw new AdminUsageError(`environment variable ${passwordVar} must hold a password of 10 characters or more`);
      const id = await upsertMember(db, { orgId, email, name: values.name, password: password ?? null, role: role.data, slackUserId: values["slack-user"] ?? null });
      console.log(`${email} is ${role.data} (${id})`);
      return;
    }
    case "remove": {
      if (!emailOk) throw new AdminUsageError("users remove <org> <email>");
      console.log((await removeMember(db, orgId, email)) ? `${email} removed` : `${email} was not a member`);
      return;
    }
    default:
      throw new AdminUsageError("users add|remove <org> <email> ...");
  }
}

import { randomBytes } from "node:crypto";
import { type AllowList, parseAllowList } from "@holdfast/core/base";
import { automationsFindBySlug, databaseAdvisoryXactLock, organisationsCount, organisationsEnsure, organisationsIdBySlug, type TriggerAuth, usersPasswordHash } from "@holdfast/core/store";
import { findOrCreateAutomation, type Graph, parseGraph, triggerPath, triggerSettings } from "@holdfast/core/versions";
import { defaultEgressAllow } from "@holdfast/core/providers";
import { setUserPassword, upsertMember, verifyPassword } from "@holdfast/core/people";
import { publishGraph } from "@holdfast/core/run";
import { type Db, inTx } from "@holdfast/db";

/** The demo automation: a webhook, a branch on the plan, a real HTTP call for pro contacts, an end. */
export function demoGraph(echoUrl: string): Graph {
  return parseGraph({
    nodes: [
      { id: "signup", kind: "trigger", name: "Form submitted", config: { eventIdField: "id" } },
      { id: "is_pro", kind: "branch", name: "Pro plan?", config: { condition: { path: "input.plan", op: "eq", value: "pro" } } },
      { id: "notify_crm", kind: "http_request", name: "Tell the CRM", config: { url: echoUrl, method: "POST", sendInput: true, body: { source: "holdfast-demo" } } },
      { id: "done", kind: "end", name: "Done" },
    ],
    edges: [
      { from: "signup", to: "is_pro" },
      { from: "is_pro", to: "notify_crm", label: "true" },
      { from: "is_pro", to: "done", label: "false" },
      { from: "notify_crm", to: "done" },
    ],
  });
}

export interface SeededAutomation {
  orgId: string;
  automationId: string;
  versionId: string;
  version: number;
}

/**
 * Creates (or finds) an organisation and an automation, and publishes `graph` through Publish's checks and numbering
 * (core's publishGraph, as the editor's Publish does): a graph Publish would refuse is refused here with the same
 * problems (InvalidDraftError), and the newest version already having exactly this graph is read back. Safe to run
 * again. `allow`: the egress exceptions the graph's destinations are checked against (default HOLDFAST_EGRESS_ALLOW).
 */
export async function ensurePublished(
  db: Db,
  o: { orgSlug: string; orgName: string; automationSlug: string; automationName: string; graph: Graph; triggerAuth?: TriggerAuth; allow?: AllowList },
): Promise<SeededAutomation> {
  const graph = parseGraph(o.graph);
  return inTx(db, async (tx) => {
    const orgId = await organisationsEnsure(tx, o.orgSlug, o.orgName);
    // A new automation gets its trigger credentials with it (findOrCreateAutomation); an existing one keeps its own.
    const automation = await findOrCreateAutomation(tx, { orgId, slug: o.automationSlug, name: o.automationName, triggerAuth: o.triggerAuth ?? "signed" });
    const published = await publishGraph(tx, { orgId, automationId: automation.id, graph, by: "seed", ...(o.allow ? { allow: o.allow } : {}) });
    return { orgId, automationId: automation.id, versionId: published.versionId, version: published.version };
  });
}

/**
 * The demo calls the web app's own echo, which `pnpm start` lets through the egress guard (scripts/start.mjs) but
 * only after the seed has run: its publish checks allow that one address besides HOLDFAST_EGRESS_ALLOW.
 */
function demoEchoAllowed(echoUrl: string): AllowList {
  const u = new URL(echoUrl);
  return [...defaultEgressAllow(), ...parseAllowList(`${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`)];
}

export const demoEmail = "demo@holdfast.local";
/** The password earlier versions seeded and the README published: never valid once the seed has run. */
const formerDemoPassword = "holdfast-demo";

/**
 * The demo, on an empty database only: organisation "demo", its automation "demo-follow-up" (URL-token trigger, so
 * the README's curl needs no signing) and its owner with a random password, printed once. Later runs (every
 * `pnpm start`) never touch the owner's password; they keep the demo automation's graph current if it still exists.
 */
export async function seedDemo(db: Db, o: { echoUrl: string; publicUrl: string }): Promise<void> {
  const demo = { orgSlug: "demo", orgName: "Demo", automationSlug: "demo-follow-up", automationName: "Demo follow-up", graph: demoGraph(o.echoUrl) };
  const claimed = await inTx(db, async (tx) => {
    // One seeder at a time; the demo is created only if no organisation exists at all.
    await databaseAdvisoryXactLock(tx, 72110002);
    return (await organisationsCount(tx)) === 0;
  });
  const exists = await organisationsIdBySlug(db, "demo");
  if (!claimed && !exists) {
    console.log("seed: this database already has organisations; no demo is created");
    return;
  }
  if (!claimed && exists && !(await automationsFindBySlug(db, exists, demo.automationSlug))) {
    console.log("seed: the demo automation was removed; nothing to do");
    return;
  }
  const seeded = await ensurePublished(db, { ...demo, triggerAuth: "url_token", allow: demoEchoAllowed(o.echoUrl) });
  const a = await automationsFindBySlug(db, seeded.orgId, demo.automationSlug);
  if (!a) throw new Error("seed: the demo automation vanished while it was seeded");
  const settings = await triggerSettings(db, seeded.orgId, a.id, a.triggerAuth);
  const url = `${o.publicUrl.replace(/\/$/, "")}${triggerPath("demo", demo.automationSlug, settings.mode, settings.urlToken)}`;
  console.log(`seed: demo/demo-follow-up is version ${seeded.version}; its trigger URL: ${url}`);
  // Earlier versions seeded this owner with a password written in the source: an install upgraded from one gets a
  // random password now (and its sessions end), printed once like a new demo's.
  const ownerHash = await usersPasswordHash(db, demoEmail);
  if (!claimed && ownerHash && (await verifyPassword(formerDemoPassword, ownerHash))) {
    const password = randomBytes(12).toString("base64url");
    await setUserPassword(db, demoEmail, password);
    console.log(`seed: ${demoEmail} still had the old published demo password; its new password is ${password}`);
    console.log("      (shown once; set another with: pnpm holdfast users password demo@holdfast.local)");
  }
  if (claimed) {
    const password = randomBytes(12).toString("base64url");
    await upsertMember(db, { orgId: seeded.orgId, email: demoEmail, name: "Demo Owner", password, role: "owner" });
    console.log(`seed: sign in as ${demoEmail} with password ${password}`);
    console.log("      (shown once; set a new one with: pnpm holdfast users password demo@holdfast.local)");
  }
}

import { budgetsSetAllowed } from "@holdfast/core/store";
import { triggerSettings } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { upsertMember } from "@holdfast/core/people";
import { createDb, type Db, urlAsRole } from "@holdfast/db";
import { holdfastCli } from "./infra/cli";
import {
  type CrmTarget,
  type HttpTarget,
  type ModelTarget,
  type SlackApi,
  type SmtpTarget,
  ensurePublishedAutomation,
  startCrmTarget,
  startHttpTarget,
  startModelTarget,
  startSlackApi,
  startSmtpTarget,
} from "./testkit";
import { approver, mixGraph } from "./mix";

/** The outside world the runs act on: real servers on loopback (testkit's), each counting what it was asked. */
export interface Providers {
  http: HttpTarget;
  /** Plain SMTP: it does not drop a repeated Message-ID, so a second send would be a second email. */
  smtp: SmtpTarget;
  crm: CrmTarget;
  model: ModelTarget;
  slack: SlackApi;
  close(): Promise<void>;
}

export async function startProviders(): Promise<Providers> {
  const [http, smtp, crm, model, slack] = await Promise.all([
    startHttpTarget(),
    startSmtpTarget({ replyDelayMs: 20 }),
    startCrmTarget(["crm-soak-token"]),
    startModelTarget("sk-soak"),
    startSlackApi({ token: "xoxb-soak", channels: ["C0APPROVALS"] }),
  ]);
  model.behave({ delayMs: 150 });
  return {
    http,
    smtp,
    crm,
    model,
    slack,
    close: async () => {
      await Promise.all([http.close(), smtp.close(), crm.close(), model.close(), slack.close()]);
    },
  };
}

export interface Deployment {
  /** As holdfast_worker, the role background processes use. */
  workerUrl: string;
  adminUrl: string;
  db: Db;
  orgId: string;
  automationId: string;
  signingSecret: string;
}

export const org = "soak";
export const automation = "mix";

/** A migrated database on the soak's own PostgreSQL, one organisation, the mix automation, its connections and people. */
export async function deploy(
  root: string,
  adminUrl: string,
  p: Providers,
  timing: { replyTimeoutSeconds: number; pauseSeconds: number; approvalDeadlineSeconds: number },
): Promise<Deployment> {
  // Migrated by the copy the processes run from (its migrations match its code).
  const workerUrl = urlAsRole(adminUrl, "holdfast_worker");
  const migrated = holdfastCli(root, ["migrate"], { DATABASE_URL: workerUrl, MIGRATE_DATABASE_URL: adminUrl });
  if (migrated.status !== 0) throw new Error(`holdfast migrate failed (exit ${migrated.status}):\n${migrated.stdout}\n${migrated.stderr}`);
  const db = createDb(workerUrl, { poolSize: 4, applicationName: "holdfast-soak" });
  const seeded = await ensurePublishedAutomation(db, {
    orgSlug: org,
    orgName: "Soak",
    automationSlug: automation,
    automationName: "Soak mix",
    graph: mixGraph({ httpUrl: p.http.url, ...timing }),
  });
  const orgId = seeded.orgId;
  await createConnection(db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: p.smtp.port, tls: "none", from: "sam@soak.test" }, secret: null });
  await createConnection(db, { orgId, kind: "crm", name: "crm", config: { baseUrl: p.crm.baseUrl }, secret: "crm-soak-token" });
  await createConnection(db, { orgId, kind: "model", name: "model", config: { baseUrl: p.model.baseUrl, model: "soak-model", inputMicrosPerMTok: 0, outputMicrosPerMTok: 0 }, secret: "sk-soak" });
  await createConnection(db, { orgId, kind: "slack", name: "slack", config: { teamId: p.slack.teamId, apiUrl: p.slack.apiUrl }, secret: p.slack.token });
  await budgetsSetAllowed(db, orgId, 1_000_000_000_000, "soak");
  await upsertMember(db, { orgId, email: approver.email, name: approver.name, password: approver.password, role: "approver", slackUserId: approver.slackUserId });
  const settings = await triggerSettings(db, orgId, seeded.automationId, "signed");
  return { workerUrl, adminUrl, db, orgId, automationId: seeded.automationId, signingSecret: settings.signingSecret };
}

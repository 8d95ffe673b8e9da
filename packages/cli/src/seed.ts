import { automationsFindBySlug, canonicalJson, createAutomation, type Graph, parseGraph, type TriggerAuth } from "@holdfast/core";
import { type Db, inTx, type Prisma } from "@holdfast/db";

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
 * Creates (or finds) an organisation and an automation, and publishes `graph` as a new version unless the newest
 * published version already has exactly this graph. Safe to run again.
 */
export async function ensurePublished(
  db: Db,
  o: { orgSlug: string; orgName: string; automationSlug: string; automationName: string; graph: Graph; triggerAuth?: TriggerAuth },
): Promise<SeededAutomation> {
  const graph = parseGraph(o.graph);
  return inTx(db, async (tx) => {
    const org = await tx.organisation.upsert({ where: { slug: o.orgSlug }, update: {}, create: { slug: o.orgSlug, name: o.orgName } });
    // A new automation gets its trigger credentials with it (createAutomation); an existing one keeps its own.
    const automation =
      (await automationsFindBySlug(tx, org.id, o.automationSlug)) ??
      (await createAutomation(tx, { orgId: org.id, slug: o.automationSlug, name: o.automationName, triggerAuth: o.triggerAuth ?? "signed" }));
    const latest = await tx.automationVersion.findFirst({
      where: { orgId: org.id, automationId: automation.id },
      orderBy: { version: "desc" },
    });
    if (latest?.publishedAt && canonicalJson(latest.graph) === canonicalJson(graph)) {
      return { orgId: org.id, automationId: automation.id, versionId: latest.id, version: latest.version };
    }
    const created = await tx.automationVersion.create({
      data: {
        orgId: org.id,
        automationId: automation.id,
        version: (latest?.version ?? 0) + 1,
        graph: graph as unknown as Prisma.InputJsonObject,
        publishedBy: "seed",
      },
    });
    // Publishing stamps the database clock; from here on the row is immutable (a trigger refuses changes).
    await tx.$executeRaw`UPDATE automation_versions SET published_at = now() WHERE id = ${created.id} AND published_at IS NULL`;
    return { orgId: org.id, automationId: automation.id, versionId: created.id, version: created.version };
  });
}

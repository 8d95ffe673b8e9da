import { approvalsForRun, runEventsForRun, type TimelineEntry } from "@holdfast/core";
import type { Db } from "@holdfast/db";

export interface RunListItem {
  id: string;
  orgSlug: string;
  automationSlug: string;
  version: number | null;
  status: string;
  startKey: string;
  createdAt: Date;
  finishedAt: Date | null;
}

/** The newest runs across organisations (an operator's view), with the slugs and version number resolved. */
export async function recentRuns(db: Db, limit = 50): Promise<RunListItem[]> {
  const runs = await db.run.findMany({ orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: limit });
  const names = await namesFor(db, runs);
  return runs.map((r) => ({
    id: r.id,
    orgSlug: names.orgs.get(r.orgId) ?? r.orgId,
    automationSlug: names.automations.get(r.automationId) ?? r.automationId,
    version: names.versions.get(r.versionId) ?? null,
    status: r.status,
    startKey: r.startKey,
    createdAt: r.createdAt,
    finishedAt: r.finishedAt,
  }));
}

export async function runDetail(db: Db, id: string) {
  const run = await db.run.findUnique({ where: { id } });
  if (!run) return null;
  const [names, steps, timeline, approvals] = await Promise.all([
    namesFor(db, [run]),
    db.step.findMany({ where: { orgId: run.orgId, runId: run.id }, orderBy: [{ createdAt: "asc" }, { iteration: "asc" }] }),
    runEventsForRun(db, run.orgId, run.id),
    approvalsForRun(db, run.orgId, run.id),
  ]);
  return {
    run,
    orgSlug: names.orgs.get(run.orgId) ?? run.orgId,
    automationSlug: names.automations.get(run.automationId) ?? run.automationId,
    version: names.versions.get(run.versionId) ?? null,
    steps,
    timeline: timeline as TimelineEntry[],
    approvals,
  };
}

async function namesFor(db: Db, runs: { orgId: string; automationId: string; versionId: string }[]) {
  const unique = (values: string[]) => [...new Set(values)];
  const [orgs, automations, versions] = await Promise.all([
    db.organisation.findMany({ where: { id: { in: unique(runs.map((r) => r.orgId)) } }, select: { id: true, slug: true } }),
    db.automation.findMany({ where: { id: { in: unique(runs.map((r) => r.automationId)) } }, select: { id: true, slug: true } }),
    db.automationVersion.findMany({
      where: { id: { in: unique(runs.map((r) => r.versionId)) } },
      select: { id: true, version: true },
    }),
  ]);
  return {
    orgs: new Map(orgs.map((o) => [o.id, o.slug])),
    automations: new Map(automations.map((a) => [a.id, a.slug])),
    versions: new Map(versions.map((v) => [v.id, v.version])),
  };
}

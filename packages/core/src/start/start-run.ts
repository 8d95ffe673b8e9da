import { type Db, inTx } from "@holdfast/db";
import { crashpoint } from "../crash";
import { InvalidPayloadError, NoPublishedVersionError, NotFoundError } from "../errors";
import { hasUnstorableText } from "../json";
import { automationsFindStartTarget } from "../sql/automations";
import { outboxInsert } from "../sql/outbox";
import { runEventsInsert } from "../sql/run-events";
import { runsInsertIfNew } from "../sql/runs";
import { parseGraph, triggerOf } from "../versions/graph";
import { resolveStartKey } from "./start-key";
import { type SignedHeaders, verifySignature } from "./signature";

export interface StartRequest {
  orgSlug: string;
  automationSlug: string;
  /** The body exactly as received: signatures are over these bytes. */
  rawBody: string;
  body: unknown;
  headers: SignedHeaders;
  /** Where the start came from, for the timeline ("webhook", "cli"). */
  via: string;
}

export interface StartOutcome {
  runId: string;
  duplicate: boolean;
  version: number;
}

/**
 * Starts one logical run per event. The run row, its first outbox row (run.wake) and its first timeline event
 * commit in one transaction; a repeated delivery finds the same run and writes only a timeline note.
 */
export async function startRun(db: Db, request: StartRequest): Promise<StartOutcome> {
  if (hasUnstorableText(request.body)) {
    throw new InvalidPayloadError("the body contains U+0000 or an unpaired surrogate, which cannot be stored");
  }
  const outcome = await inTx(db, async (tx) => {
    const found = await automationsFindStartTarget(tx, request.orgSlug, request.automationSlug);
    if (!found.org) throw new NotFoundError("org_not_found", `organisation "${request.orgSlug}"`);
    const target = found.target;
    if (!target) throw new NotFoundError("automation_not_found", `automation "${request.automationSlug}"`);
    if (!target.versionId || target.version === null) throw new NoPublishedVersionError(request.automationSlug);

    if (target.webhookSecrets.length > 0) {
      const [{ now }] = (await tx.$queryRaw<{ now: number }[]>`SELECT EXTRACT(EPOCH FROM now())::float8 AS now`) as [
        { now: number },
      ];
      verifySignature(target.webhookSecrets, request.rawBody, request.headers, now);
    }
    const graph = parseGraph(target.graph);
    const startKey = resolveStartKey(target.automationId, triggerOf(graph).config, {
      webhookId: request.headers["webhook-id"],
      body: request.body,
    });
    const run = await runsInsertIfNew(tx, {
      orgId: target.orgId,
      automationId: target.automationId,
      versionId: target.versionId,
      startKey,
      input: request.body,
    });
    if (run.inserted) {
      await outboxInsert(tx, [
        { orgId: target.orgId, runId: run.id, topic: "run.wake", payload: { orgId: target.orgId, runId: run.id, reason: "started" } },
      ]);
    }
    await runEventsInsert(tx, [
      {
        orgId: target.orgId,
        runId: run.id,
        type: run.inserted ? "run.started" : "run.duplicate_start",
        data: { startKey, via: request.via, version: target.version },
      },
    ]);
    return { runId: run.id, duplicate: !run.inserted, version: target.version };
  });
  crashpoint("start.after_commit");
  return outcome;
}

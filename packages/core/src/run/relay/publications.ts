import { createHash } from "node:crypto";
import type { Publication } from "@holdfast/queue";
import { queueForTopic, timersDueJob } from "../../base/catalog";
import type { UnsentOutboxRow } from "../../store/sql/outbox";

/**
 * The jobs a relay batch publishes: a row each, except the `timer.due` rows due at one instant (the same `dueAt`),
 * which go as one `timers.due` job, delayed until that instant, that says when and for how many. The engine answers it
 * with the due sweep's batches (run/engine/due-drain.ts), which fire whatever is due by then. A spike of timers due at
 * 09:00 is then a job per relay batch, not one per timer. A lone row keeps its own `timer.due` job and id,
 * `<timer id>_<wake>` (fired by id, fenced by its wake number).
 * A group's job id is a digest of its timers and wake numbers: a batch published again after a crash before its commit is
 * suppressed while the queue remembers the id; grouped otherwise, the repeat is one more drain that finds less due.
 */
export function publicationsOf(rows: readonly UnsentOutboxRow[]): Publication[] {
  const out: Publication[] = [];
  const dueTogether = new Map<string, UnsentOutboxRow[]>();
  for (const row of rows) {
    const dueAt = row.topic === "timer.due" ? (row.payload as { dueAt?: unknown } | null)?.dueAt : undefined;
    if (typeof dueAt !== "string") {
      out.push(single(row));
      continue;
    }
    const group = dueTogether.get(dueAt);
    if (group) group.push(row);
    else dueTogether.set(dueAt, [row]);
  }
  for (const [dueAt, group] of dueTogether) {
    if (group.length === 1) {
      out.push(single(group[0] as UnsentOutboxRow));
      continue;
    }
    const digest = createHash("sha256");
    for (const id of group.map((row) => row.jobId).sort()) digest.update(`${id}\n`);
    out.push({
      queue: timersDueJob.queue,
      name: timersDueJob.name,
      data: { dueAt, timers: group.length },
      options: { jobId: `tmrs_${digest.digest("base64url").slice(0, 32)}`, delayMs: Math.max(...group.map((row) => row.delayMs)) },
    });
  }
  return out;
}

function single(row: UnsentOutboxRow): Publication {
  return { queue: queueForTopic(row.topic, row.payload), name: row.topic, data: row.payload, options: { jobId: row.jobId, delayMs: row.delayMs } };
}

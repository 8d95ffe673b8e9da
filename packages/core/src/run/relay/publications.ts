import { createHash } from "node:crypto";
import type { Publication } from "@holdfast/queue";
import { queueForTopic, timersDueJob } from "../../base/catalog";
import type { UnsentOutboxRow } from "../../store/sql/outbox";

/**
 * The jobs a relay batch publishes: a row each, except the `timer.due` rows due at one instant (the same `dueAt`),
 * which go as one `timers.due` job holding every one of them, delayed until that instant. The engine fires such a job's
 * timers as batches (run/engine/fire-timers.ts), each still fenced by its wake number. A spike of timers due at 09:00
 * is then a job per relay batch, not one per timer: at 100,000 timers the engine's jobs cost about a third of the
 * firing's CPU (docs/performance.md). A lone row keeps its own `timer.due` job and id, `<timer id>_<wake>`.
 * A group's job id is a digest of its timers and wakes: a batch published again after a crash before its commit is
 * suppressed while the queue remembers the id; grouped otherwise, its timers are fired once (the fence) and the
 * repeats find them fired.
 */
export function publicationsOf(rows: readonly UnsentOutboxRow[]): Publication[] {
  const out: Publication[] = [];
  const dueTogether = new Map<string, UnsentOutboxRow[]>();
  for (const row of rows) {
    const dueAt = row.topic === "timer.due" ? (row.payload as { dueAt?: unknown }).dueAt : undefined;
    if (typeof dueAt !== "string") {
      out.push(single(row));
      continue;
    }
    const group = dueTogether.get(dueAt);
    if (group) group.push(row);
    else dueTogether.set(dueAt, [row]);
  }
  for (const group of dueTogether.values()) {
    if (group.length === 1) {
      out.push(single(group[0] as UnsentOutboxRow));
      continue;
    }
    const digest = createHash("sha256");
    for (const row of group) digest.update(`${row.jobId}\n`);
    out.push({
      queue: timersDueJob.queue,
      name: timersDueJob.name,
      data: { timers: group.map((row) => row.payload) },
      options: { jobId: `tmrs_${digest.digest("base64url").slice(0, 32)}`, delayMs: Math.max(...group.map((row) => row.delayMs)) },
    });
  }
  return out;
}

function single(row: UnsentOutboxRow): Publication {
  return { queue: queueForTopic(row.topic, row.payload), name: row.topic, data: row.payload, options: { jobId: row.jobId, delayMs: row.delayMs } };
}

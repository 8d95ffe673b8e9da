import { randomUUID } from "node:crypto";
import { runsRerunOf, runsReruns } from "@holdfast/core/store";
import Link from "next/link";
import { db } from "../../../server/db";
import { rerunAction, retryAction } from "./actions";

export interface RetryActionsRun {
  id: string;
  orgId: string;
  status: "running" | "completed" | "failed" | "cancelled" | "converted" | string;
}

/**
 * What a person can do about a finished run (issue 16, item 2): "Retry from the failed step" (failed runs: the same
 * run, the failed step's new attempt with the same key) and "Run again with the same input" (a new run of the newest
 * published version, linked to this one), with the links between the runs. Refusals (a call that needs review
 * first, an archived automation) come back as the page's error message in words.
 */
export async function RetryActions({ run, canAct }: { run: RetryActionsRun; canAct: boolean }) {
  const [rerunOf, reruns] = await Promise.all([runsRerunOf(db, run.orgId, run.id), runsReruns(db, run.orgId, run.id)]);
  const finished = run.status !== "running";
  return (
    <div className="retry-actions" data-retry-actions="1">
      {rerunOf ? (
        <p className="small" data-rerun-of={rerunOf}>
          Runs again the input of <Link href={`/runs/${rerunOf}`}>{rerunOf}</Link>.
        </p>
      ) : null}
      {finished && canAct ? (
        <div style={{ display: "flex", gap: "0.5rem", flexWrap: "wrap" }}>
          {run.status === "failed" ? (
            <form action={retryAction}>
              <input type="hidden" name="runId" value={run.id} />
              <input type="hidden" name="orgId" value={run.orgId} />
              <button type="submit" className="primary" title="The failed step is tried again in this run, marked as the same request, so a service that recognises repeats still acts once">
                Retry from the failed step
              </button>
            </form>
          ) : null}
          <form action={rerunAction}>
            <input type="hidden" name="runId" value={run.id} />
            <input type="hidden" name="orgId" value={run.orgId} />
            <input type="hidden" name="requestKey" value={randomUUID()} />
            <button type="submit" title="A new run of the newest published version with this run's input, linked to this one">
              Run again with the same input
            </button>
          </form>
        </div>
      ) : null}
      {finished && !canAct ? <p className="muted small">Only owners and editors can retry or run it again.</p> : null}
      {reruns.length ? (
        <p className="small" data-reruns="1">
          Run again as:{" "}
          {reruns.map((r, i) => (
            <span key={r.id}>
              {i ? ", " : ""}
              <Link href={`/runs/${r.id}`}>{r.id}</Link> ({r.status})
            </span>
          ))}
        </p>
      ) : null}
    </div>
  );
}

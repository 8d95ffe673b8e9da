import Link from "next/link";
import type { RunsAt } from "../server/runs-at";
import type { viewerClock } from "../server/viewer-zone";
import { runsAtHeading, windowWords } from "./automations/[id]/canvas/counts-model";
import { At, RunStatusBadge } from "./ui";

type Clock = Awaited<ReturnType<typeof viewerClock>>["clock"];

/**
 * The runs behind one count on the canvas, in words: Runs at "Send the email" now (12), of which automation, version
 * and window, newest first, a page at a time; a way back to the counts and to all runs.
 */
export function RunsAtList({ at, clock }: { at: RunsAt; clock: Clock }) {
  const settled = at.state !== "now" && at.state !== "held";
  const q = new URLSearchParams({ org: at.orgSlug, automation: at.automationSlug, at: at.nodeId, state: at.state, window: at.window });
  if (at.version !== null) q.set("version", String(at.version));
  const next = at.nextCursor ? `/?${new URLSearchParams([...q.entries(), ["cursor", at.nextCursor]]).toString()}` : null;
  const all = new URLSearchParams({ automation: at.automationSlug });
  if (at.version !== null) all.set("version", String(at.version));
  return (
    <section className="runs-at" data-runs-at={`${at.nodeId}:${at.state}`}>
      <h1>{runsAtHeading(at.state, at.stepTitle, at.count)}</h1>
      <p className="muted">
        {at.automationName}, {at.version === null ? "all versions" : `version ${at.version}`}
        {settled ? ` · ${windowWords[at.window]}` : " · in progress now, whenever they started"} · test runs are not counted.{" "}
        <Link href={`/?${all.toString()}`}>All runs of {at.automationName}</Link>
      </p>
      {at.restarted ? <p className="flash small">That page of the list is gone: here are the newest runs again.</p> : null}
      {at.runs.length === 0 ? (
        <p className="empty muted">No runs here {settled ? "in this window" : "now"}.</p>
      ) : (
        <table className="runs">
          <thead>
            <tr>
              <th>Run</th>
              <th>Version</th>
              <th>Status</th>
              <th>Contact</th>
              <th>Started</th>
              <th>{settled ? "Left the step" : "At the step since"}</th>
            </tr>
          </thead>
          <tbody>
            {at.runs.map((r) => (
              <tr key={r.id} data-run={r.id}>
                <td>
                  <Link href={`/runs/${r.id}`} className="mono">
                    {r.id}
                  </Link>
                </td>
                <td>{r.version ?? "-"}</td>
                <td>
                  <RunStatusBadge status={r.status} />
                </td>
                <td>{r.contact ?? <span className="muted">-</span>}</td>
                <td>
                  <At at={r.createdAt} clock={clock} />
                </td>
                <td>
                  <At at={r.at} clock={clock} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next ? (
        <p>
          <Link href={next} rel="next">
            Older runs
          </Link>
        </p>
      ) : null}
    </section>
  );
}

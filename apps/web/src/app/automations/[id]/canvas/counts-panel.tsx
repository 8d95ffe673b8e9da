"use client";

import Link from "next/link";
import { useContext, useState } from "react";
import { percent } from "../../../percent";
import { CountsPlaceContext } from "./count-node";
import { count, emailFigures, goalWords, pathOutcome, runsHref, type ShownJourney, type SplitGoal, splitGoals, windowWords } from "./counts-model";

/**
 * Beside the counts canvas: the journey's runs (started, finished, converted, in progress now), the conversion rate of
 * each version, every email step's figures and every A/B split's paths with their outcome for a chosen goal.
 */
export function CountsPanel({ journey, allVersions }: { journey: ShownJourney; allVersions: boolean }) {
  const { counts, graph } = journey;
  const place = useContext(CountsPlaceContext);
  const nameOf = (id: string) => graph.nodes.find((n) => n.id === id)?.name ?? id;
  const emailSteps = graph.nodes.filter((n) => n.kind === "send_email");
  const splits = graph.nodes.filter((n) => n.kind === "split");
  const r = counts.runs;
  return (
    <aside className="panel counts-panel" aria-label="how the journey performs">
      <section data-section="runs">
        <h3>{allVersions ? "All versions" : `Version ${journey.version}`}</h3>
        <p className="small muted">
          {windowWords[place.window]}
          {place.window === "all" ? "" : " (whole days, UTC)"}; "now" counts every run in progress, whenever it started. Test runs are not counted.
        </p>
        <dl className="facts counts-facts">
          <dt>Started</dt>
          <dd data-fact="started">{count(r.started)}</dd>
          <dt>In progress now</dt>
          <dd data-fact="now">{count(r.now)}</dd>
          <dt>Completed</dt>
          <dd data-fact="completed">{count(r.completed)}</dd>
          <dt>Failed</dt>
          <dd data-fact="failed">{count(r.failed)}</dd>
          <dt>Stopped</dt>
          <dd data-fact="cancelled">{count(r.cancelled)}</dd>
          <dt>Converted</dt>
          <dd data-fact="converted">
            {count(r.converted)} <span className="muted small">({percent(r.converted, r.started)} of started)</span>
          </dd>
        </dl>
        <Link className="small" href={runsHref(place)}>
          Open the runs list
        </Link>
      </section>
      <VersionsTable versions={counts.versions} />
      {emailSteps.map((n) => (
        <EmailSection key={n.id} title={nameOf(n.id)} email={counts.nodes[n.id]?.email ?? null} />
      ))}
      {splits.map((n) => (
        <SplitSection key={n.id} nodeId={n.id} title={nameOf(n.id)} paths={journey.splitScores[n.id] ?? []} minRuns={journey.minPathRuns} />
      ))}
    </aside>
  );
}

/** Each version's conversion rate (converted of started, within the window) and its runs in progress now. */
function VersionsTable({ versions }: { versions: ShownJourney["counts"]["versions"] }) {
  if (versions.length === 0) return null;
  return (
    <section data-section="versions">
      <h3>Conversion by version</h3>
      <table className="counts-table">
        <thead>
          <tr>
            <th>Version</th>
            <th>Started</th>
            <th>Converted</th>
            <th>Now</th>
          </tr>
        </thead>
        <tbody>
          {[...versions]
            .sort((a, b) => b.version - a.version)
            .map((v) => (
              <tr key={v.versionId} data-version={v.version}>
                <td>{v.version}</td>
                <td>{count(v.started)}</td>
                <td>
                  {count(v.converted)} <span className="muted small">({percent(v.converted, v.started)})</span>
                </td>
                <td>{count(v.now)}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </section>
  );
}

function EmailSection({ title, email }: { title: string; email: ShownJourney["counts"]["nodes"][string]["email"] }) {
  return (
    <section data-section="email" data-step-title={title}>
      <h3>Email: {title}</h3>
      {email && email.sent > 0 ? (
        <table className="counts-table">
          <tbody>
            {emailFigures(email).map((f) => (
              <tr key={String(f.key)} data-figure={String(f.key)}>
                <th scope="row">{f.label}</th>
                <td>{count(f.n)}</td>
                <td className="muted small">{f.rate === null ? "" : `${f.rate} ${f.of}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="small muted">No email figures counted for this step yet.</p>
      )}
    </section>
  );
}

/**
 * A split's paths: how many took each, and each path's rate for the chosen outcome with its 95% range. "Compare paths
 * by", not "Goal": the page already has the automation's own goal, which this choice does not change.
 */
function SplitSection({ nodeId, title, paths, minRuns }: { nodeId: string; title: string; paths: ShownJourney["splitScores"][string]; minRuns: number }) {
  const [goal, setGoal] = useState<SplitGoal>("replied");
  return (
    <section data-section="split" data-split={nodeId}>
      <h3>A/B split: {title}</h3>
      <label className="small">
        Compare paths by{" "}
        <select name={`compare-${nodeId}`} value={goal} onChange={(e) => setGoal(e.target.value as SplitGoal)}>
          {splitGoals.map((g) => (
            <option key={g} value={g}>
              {goalWords[g]}
            </option>
          ))}
        </select>
      </label>
      <table className="counts-table">
        <thead>
          <tr>
            <th>Path</th>
            <th>Runs</th>
            <th>{goalWords[goal]}</th>
          </tr>
        </thead>
        <tbody>
          {paths.map((p) => {
            const o = pathOutcome(p, goal, minRuns);
            return (
              <tr key={p.path} data-path={p.path}>
                <td>{p.path}</td>
                <td data-path-runs>{count(p.n)}</td>
                <td data-path-outcome>
                  {p.enough ? `${count(p.goals[goal].reached)} (${o.rate})` : o.rate}
                  {o.interval ? <div className="muted small">{o.interval}</div> : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {paths.length === 0 ? <p className="small muted">No run has reached this split yet.</p> : null}
    </section>
  );
}

import type { Story } from "@holdfast/core/story";
import Link from "next/link";
import type { RunDetail } from "../../../../server/runs";
import { RunStatusBadge } from "../../../ui";
import { TestRunPanel } from "../test-run-panel";
import { repeatsWords } from "./words";

interface Props {
  detail: RunDetail;
  clock: Story["clock"];
  role: string | undefined;
  done: string | undefined;
  error: string | undefined;
}

/** The run's title and where it belongs, the test-run panel, repeated deliveries and the last action's flash. */
export function RunHeader({ detail, clock, role, done, error }: Props) {
  const { run } = detail;
  return (
    <>
      <p>
        <Link href="/">&larr; Runs</Link>
      </p>
      <h1>
        Run <span className="mono">{run.id}</span> <RunStatusBadge status={run.displayStatus} />
        {run.test ? (
          <>
            {" "}
            <span className="badge badge-ready">Test run</span>
          </>
        ) : null}
      </h1>
      <p className="run-sub">
        <strong>{detail.automationName}</strong>{" "}
        <span className="muted">
          ({detail.orgSlug} / {detail.automationSlug}, version {detail.version})
        </span>{" "}
        · {detail.contact ?? <span className="muted">no contact</span>}
        {detail.contactZone ? <span className="muted"> ({detail.contactZone})</span> : null} · started {clock.when(run.createdAt)}
      </p>
      {run.test ? (
        <>
          <p className="muted small" data-test-run="1">
            Test run: started from the editor's trigger panel with the automation's sample payload (its timeline says by whom).
          </p>
          <TestRunPanel orgSlug={detail.orgSlug} runId={run.id} canAct={role === "owner" || role === "editor"} />
        </>
      ) : null}
      {run.duplicateDeliveries > 0 ? (
        <p className="muted small" data-duplicates={run.duplicateDeliveries}>
          {repeatsWords(run.duplicateDeliveries)}
          {run.lastDuplicateAt ? ` The latest came ${clock.when(run.lastDuplicateAt)}.` : ""}
        </p>
      ) : null}
      {done ? (
        <p className="flash flash-ok" role="status">
          {done}
        </p>
      ) : null}
      {error ? (
        <p className="flash flash-error" role="alert">
          {error}
        </p>
      ) : null}
    </>
  );
}

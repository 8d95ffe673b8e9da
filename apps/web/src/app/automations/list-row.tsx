"use client";

import { heldWords } from "@holdfast/core/status-words";
import Link from "next/link";
import { draftWords, LifecycleBadge, shownStatus } from "./[id]/lifecycle";

type Status = "active" | "paused" | "archived";
type Change = { action: "pause"; mode: "refuse"; runs: "continue" } | { action: "resume" } | { action: "archive" } | { action: "restore" };

/** An automation's status as the list knows it. */
export interface ListStatus {
  status: Status;
  published?: boolean;
  pauseMode?: string | null;
  pauseRuns?: string | null;
}

/** One automation in the list: its name, status with the quick lifecycle buttons, latest version and runs in flight. */
export function AutomationRow(props: {
  a: { id: string; name: string; slug: string; latest: number | null; running: number; held: number };
  st: ListStatus | undefined;
  orgSlug: string;
  canEdit: boolean;
  act: (automationId: string, name: string, c: Change, done: string) => Promise<void>;
}) {
  const { a, st, orgSlug } = props;
  const status = st?.status ?? "active";
  return (
    <tr data-automation={a.slug} data-status={status}>
      <td>
        <Link href={`/automations/${a.id}?org=${orgSlug}`}>{a.name}</Link> <span className="muted small">{a.slug}</span>
      </td>
      <td>
        <LifecycleBadge
          status={shownStatus(status, st?.published)}
          title={shownStatus(status, st?.published) === "draft" ? draftWords : status === "paused" ? `deliveries: ${st?.pauseMode === "hold" ? "accepted and held" : "refused with 503, retried later"}; running runs: ${st?.pauseRuns === "hold" ? "held" : "continue"}` : undefined}
        />{" "}
        {props.canEdit && <RowButtons {...props} status={status} />}
      </td>
      <td>{a.latest ? `v${a.latest}` : <span className="muted">draft only</span>}</td>
      <td data-running={a.running}>
        {a.running}
        {a.held > 0 && <div className="small warn" data-held={a.held}>{`${a.held} ${heldWords.replace(/^Held/, "held")}`}</div>}
      </td>
      <td>
        <Link href={`/automations/${a.id}/versions?org=${orgSlug}`}>Versions</Link>
      </td>
    </tr>
  );
}

/** The list's quick lifecycle buttons (the editor has the other pause choices). */
function RowButtons({ a, act, status }: { a: { id: string; name: string }; act: (automationId: string, name: string, c: Change, done: string) => Promise<void>; status: Status }) {
  return (
    <>
      {status === "active" && (
        <button type="button" className="small" onClick={() => act(a.id, a.name, { action: "pause", mode: "refuse", runs: "continue" }, "paused (new deliveries are refused with 503 and Retry-After, so senders retry later; running runs continue). The editor has the other pause choices.")}>
          Pause
        </button>
      )}
      {status === "paused" && (
        <button type="button" className="small" onClick={() => act(a.id, a.name, { action: "resume" }, "resumed: deliveries start runs again and held runs go on.")}>
          Resume
        </button>
      )}
      {status !== "archived" && (
        <button
          type="button"
          className="small"
          onClick={() => {
            if (window.confirm(`Archive ${a.name}? Deliveries are refused (410) and its editor becomes read-only; runs already going continue. You can restore it.`)) {
              void act(a.id, a.name, { action: "archive" }, "archived (hidden from this list; Show archived brings it back).");
            }
          }}
        >
          Archive
        </button>
      )}
      {status === "archived" && (
        <button type="button" className="small" onClick={() => act(a.id, a.name, { action: "restore" }, "restored: active again.")}>
          Restore
        </button>
      )}
    </>
  );
}

import { runStatusWords } from "@holdfast/core/status-words";
import type { ReactNode } from "react";

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status.replace(/[^a-z_]/g, "")}`}>{status}</span>;
}

/** A run's display status in words (core's run/runs/status-words.ts): a held run says its automation is paused. */
export function RunStatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge badge-${status.replace(/[^a-z_]/g, "")}`} data-run-status={status}>
      {status === "held" ? runStatusWords(status) : status}
    </span>
  );
}

/** An instant as people read it, in the viewer's zone (`clock` from server/viewer-zone's viewerClock); ISO on hover. */
export function At({ at, clock }: { at: Date | null | undefined; clock: { when(at: Date): string } }) {
  if (!at) return <span className="muted">-</span>;
  return (
    <time dateTime={at.toISOString()} title={at.toISOString()}>
      {clock.when(at)}
    </time>
  );
}

export function Json({ value }: { value: unknown }): ReactNode {
  if (value === null || value === undefined) return <span className="muted">-</span>;
  return <pre className="json">{JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2)}</pre>;
}

/** One line of JSON (the timeline's details): short values inline, longer ones folded behind a summary. */
export function InlineJson({ value }: { value: unknown }): ReactNode {
  if (value === null || value === undefined) return <span className="muted">-</span>;
  const text = JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
  if (text.length <= 140) return <code className="inline-json">{text}</code>;
  return (
    <details className="inline-json">
      <summary>
        <code>{text.slice(0, 120)}…</code>
      </summary>
      <Json value={value} />
    </details>
  );
}

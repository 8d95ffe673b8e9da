import type { ReactNode } from "react";

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status.replace(/[^a-z_]/g, "")}`}>{status}</span>;
}

export function Time({ at }: { at: Date | null | undefined }) {
  if (!at) return <span className="muted">-</span>;
  const iso = at.toISOString();
  return (
    <time dateTime={iso} title={iso}>
      {iso.replace("T", " ").replace("Z", "")}
    </time>
  );
}

export function Json({ value }: { value: unknown }): ReactNode {
  if (value === null || value === undefined) return <span className="muted">-</span>;
  return <pre className="json">{JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2)}</pre>;
}

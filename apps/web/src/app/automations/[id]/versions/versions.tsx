"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../../../server/trpc/client";
import { MigrationSection } from "./migration";
import { useMigration } from "./use-migration";
import { VersionDiff } from "./version-diff";

/**
 * Version history with a readable diff between any two versions, and the optional migration of in-flight runs:
 * map old step ids to new ones (same id by default), choose what happens to runs on a removed step, see the dry
 * run (how many runs sit on each step and where each would land), then apply (migration.tsx).
 */
export function Versions({ orgSlug, automationId, canEdit }: { orgSlug: string; automationId: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const input = { orgSlug, automationId };
  const versions = useQuery(trpc.versions.list.queryOptions(input));
  const list = versions.data ?? [];
  const newest = list[0]?.version ?? 0;
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const a = from ?? (newest > 1 ? newest - 1 : newest);
  const b = to ?? newest;
  const diff = useQuery({ ...trpc.versions.diff.queryOptions({ ...input, from: a, to: b }), enabled: a > 0 && b > 0 && a !== b });
  const m = useMigration(input, a, b);

  if (versions.isPending) return <p className="muted">Loading versions…</p>;
  if (versions.isError) return <p className="flash flash-error">{versions.error.message}</p>;
  if (list.length === 0) return <p className="empty muted">Nothing published yet. Publish the draft from the editor.</p>;
  const removed = diff.data?.removed ?? [];

  return (
    <>
      <h2>History</h2>
      <VersionHistory list={list} />

      <h2>What changed</h2>
      <div className="filters">
        <VersionSelect label="From" name="diff-from" value={a} versions={list} onChange={(v) => (setFrom(v), m.setPlanned(null))} />
        <VersionSelect label="To" name="diff-to" value={b} versions={list} onChange={(v) => (setTo(v), m.setPlanned(null))} />
      </div>
      <VersionDiff same={a === b} diff={diff.data} />

      {canEdit && a !== b && <MigrationSection m={m} a={a} b={b} removed={removed} />}
    </>
  );
}

/** The published versions, newest first, with who published each and how many of its runs are in flight. */
function VersionHistory({ list }: { list: { id: string; version: number; publishedAt: Date | string; publishedBy: string | null; running: number }[] }) {
  return (
    <table className="versions">
      <thead>
        <tr>
          <th>Version</th>
          <th>Published</th>
          <th>By</th>
          <th>Runs in flight</th>
        </tr>
      </thead>
      <tbody>
        {list.map((v) => (
          <tr key={v.id} data-version={v.version}>
            <td>v{v.version}</td>
            <td>{new Date(v.publishedAt).toISOString().replace("T", " ").slice(0, 19)} UTC</td>
            <td>{v.publishedBy ?? "-"}</td>
            <td>{v.running}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function VersionSelect(p: { label: string; name: string; value: number; versions: { version: number }[]; onChange: (version: number) => void }) {
  return (
    <label>
      {p.label}
      <select name={p.name} value={p.value} onChange={(e) => p.onChange(Number(e.target.value))}>
        {p.versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version}
          </option>
        ))}
      </select>
    </label>
  );
}

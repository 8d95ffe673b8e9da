"use client";

type NodeRef = { id: string; kind: string };
type EdgeRef = { from: string; to: string; label?: string | null };

/** What changed between two versions, a line per step or edge added, removed or changed. */
export interface VersionDiffData {
  added: NodeRef[];
  removed: NodeRef[];
  changed: { id: string; fields: { field: string; from: unknown; to: unknown }[] }[];
  edgesAdded: EdgeRef[];
  edgesRemoved: EdgeRef[];
}

/** The readable diff between two versions (or why there is none to show yet). */
export function VersionDiff({ same, diff }: { same: boolean; diff: VersionDiffData | undefined }) {
  if (same) return <p className="muted">Choose two different versions.</p>;
  if (!diff) return <p className="muted">Comparing…</p>;
  return (
    <div className="diff">
      {diff.added.map((n) => (
        <div key={`a-${n.id}`} className="diff-added">
          + node <code>{n.id}</code> ({n.kind})
        </div>
      ))}
      {diff.removed.map((n) => (
        <div key={`r-${n.id}`} className="diff-removed">
          − node <code>{n.id}</code> ({n.kind})
        </div>
      ))}
      {diff.changed.map((n) => (
        <div key={`c-${n.id}`} className="diff-changed">
          ~ node <code>{n.id}</code>:{" "}
          {n.fields.map((f) => (
            <span key={f.field} className="diff-field">
              {f.field} <del>{JSON.stringify(f.from)}</del> → <ins>{JSON.stringify(f.to)}</ins>{" "}
            </span>
          ))}
        </div>
      ))}
      {diff.edgesAdded.map((e) => (
        <div key={`ea-${e.from}-${e.to}-${e.label ?? ""}`} className="diff-added">
          + edge {e.from} → {e.to}
          {e.label ? ` (${e.label})` : ""}
        </div>
      ))}
      {diff.edgesRemoved.map((e) => (
        <div key={`er-${e.from}-${e.to}-${e.label ?? ""}`} className="diff-removed">
          − edge {e.from} → {e.to}
          {e.label ? ` (${e.label})` : ""}
        </div>
      ))}
      {!diff.added.length && !diff.removed.length && !diff.changed.length && !diff.edgesAdded.length && !diff.edgesRemoved.length && <p className="muted">No changes.</p>}
    </div>
  );
}

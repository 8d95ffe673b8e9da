"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../../server/trpc/client";

/**
 * Version history with a readable diff between any two versions, and the optional migration of in-flight runs:
 * map old step ids to new ones (same id by default), choose what happens to runs on a removed step, see the dry
 * run (how many runs sit on each step and where each would land), then apply.
 */
type Rule = { kind: "move"; to: string } | { kind: "cancel" } | { kind: "stay" };

export function Versions({ orgSlug, automationId, canEdit }: { orgSlug: string; automationId: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { orgSlug, automationId };
  const versions = useQuery(trpc.versions.list.queryOptions(input));
  const list = versions.data ?? [];
  const newest = list[0]?.version ?? 0;
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const a = from ?? (newest > 1 ? newest - 1 : newest);
  const b = to ?? newest;
  const diff = useQuery({ ...trpc.versions.diff.queryOptions({ ...input, from: a, to: b }), enabled: a > 0 && b > 0 && a !== b });

  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [rule, setRule] = useState<Rule>({ kind: "stay" });
  const migration = { fromVersion: a, toVersion: b, mapping, removed: rule };
  const [planned, setPlanned] = useState<typeof migration | null>(null);
  const plan = useQuery({ ...trpc.migrations.plan.queryOptions({ ...input, migration: planned ?? migration }), enabled: planned !== null });
  const apply = useMutation(trpc.migrations.run.mutationOptions());
  const [report, setReport] = useState<string | null>(null);

  if (versions.isPending) return <p className="muted">Loading versions…</p>;
  if (versions.isError) return <p className="flash flash-error">{versions.error.message}</p>;
  if (list.length === 0) return <p className="empty muted">Nothing published yet. Publish the draft from the editor.</p>;
  const removed = diff.data?.removed ?? [];

  return (
    <>
      <h2>History</h2>
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

      <h2>What changed</h2>
      <div className="filters">
        <VersionSelect label="From" name="diff-from" value={a} versions={list} onChange={(v) => (setFrom(v), setPlanned(null))} />
        <VersionSelect label="To" name="diff-to" value={b} versions={list} onChange={(v) => (setTo(v), setPlanned(null))} />
      </div>
      {a === b ? (
        <p className="muted">Choose two different versions.</p>
      ) : diff.data ? (
        <div className="diff">
          {diff.data.added.map((n) => (
            <div key={`a-${n.id}`} className="diff-added">
              + node <code>{n.id}</code> ({n.kind})
            </div>
          ))}
          {diff.data.removed.map((n) => (
            <div key={`r-${n.id}`} className="diff-removed">
              − node <code>{n.id}</code> ({n.kind})
            </div>
          ))}
          {diff.data.changed.map((n) => (
            <div key={`c-${n.id}`} className="diff-changed">
              ~ node <code>{n.id}</code>:{" "}
              {n.fields.map((f) => (
                <span key={f.field} className="diff-field">
                  {f.field} <del>{JSON.stringify(f.from)}</del> → <ins>{JSON.stringify(f.to)}</ins>{" "}
                </span>
              ))}
            </div>
          ))}
          {diff.data.edgesAdded.map((e) => (
            <div key={`ea-${e.from}-${e.to}-${e.label ?? ""}`} className="diff-added">
              + edge {e.from} → {e.to}
              {e.label ? ` (${e.label})` : ""}
            </div>
          ))}
          {diff.data.edgesRemoved.map((e) => (
            <div key={`er-${e.from}-${e.to}-${e.label ?? ""}`} className="diff-removed">
              − edge {e.from} → {e.to}
              {e.label ? ` (${e.label})` : ""}
            </div>
          ))}
          {!diff.data.added.length && !diff.data.removed.length && !diff.data.changed.length && !diff.data.edgesAdded.length && !diff.data.edgesRemoved.length && (
            <p className="muted">No changes.</p>
          )}
        </div>
      ) : (
        <p className="muted">Comparing…</p>
      )}

      {canEdit && a !== b && (
        <>
          <h2>
            Move runs from v{a} to v{b}
          </h2>
          <p className="small muted">Optional. Runs stay on their version unless you move them. A run whose outside call is in flight moves after it settles (apply again).</p>
          {removed.length > 0 && (
            <div className="stack mapping">
              {removed.map((n) => (
                <label key={n.id}>
                  Runs on removed step <code>{n.id}</code> map to
                  <input
                    name={`map-${n.id}`}
                    placeholder="(none: apply the rule below)"
                    value={mapping[n.id] ?? ""}
                    onChange={(e) => {
                      setPlanned(null);
                      setMapping((m) => {
                        const next = { ...m };
                        if (e.target.value) next[n.id] = e.target.value;
                        else delete next[n.id];
                        return next;
                      });
                    }}
                  />
                </label>
              ))}
            </div>
          )}
          <div className="filters">
            <label>
              Runs on a removed step
              <select
                name="removed-rule"
                value={rule.kind}
                onChange={(e) => {
                  setPlanned(null);
                  const k = e.target.value;
                  setRule(k === "move" ? { kind: "move", to: "" } : k === "cancel" ? { kind: "cancel" } : { kind: "stay" });
                }}
              >
                <option value="stay">stay on v{a}</option>
                <option value="move">move to a step…</option>
                <option value="cancel">cancel them</option>
              </select>
            </label>
            {rule.kind === "move" && (
              <label>
                Step
                <input name="move-to" value={rule.to} onChange={(e) => (setPlanned(null), setRule({ kind: "move", to: e.target.value.trim() }))} />
              </label>
            )}
            <button type="button" onClick={() => (setReport(null), setPlanned(migration))}>
              Dry run
            </button>
          </div>
          {plan.isError && <p className="flash flash-error">{plan.error.message}</p>}
          {plan.data && (
            <>
              <table className="dry-run">
                <thead>
                  <tr>
                    <th>Runs on step</th>
                    <th>Runs</th>
                    <th>Land on</th>
                    <th>Deferred (call in flight)</th>
                  </tr>
                </thead>
                <tbody>
                  {plan.data.positions.map((p) => (
                    <tr key={p.from} data-from={p.from}>
                      <td>
                        <code>{p.from}</code>
                      </td>
                      <td>{p.runs}</td>
                      <td>{"to" in p.landing ? `${p.landing.action}: ${p.landing.to}` : p.landing.action}</td>
                      <td>{p.deferred}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {plan.data.runs.length === 0 ? (
                <p className="muted">No runs of v{a} are in flight.</p>
              ) : (
                <button
                  type="button"
                  className="primary"
                  disabled={apply.isPending}
                  onClick={async () => {
                    try {
                      const r = await apply.mutateAsync({ ...input, migration: planned ?? migration });
                      setReport(`Moved ${r.migrated}, cancelled ${r.cancelled}, stayed ${r.stayed}, deferred ${r.deferred} (${r.remaining} left to move).`);
                      await reloadAfterWrite(queryClient, trpc.versions.list.queryKey(input));
                      await plan.refetch();
                    } catch (error) {
                      setReport(`Not applied: ${(error as Error).message}`);
                    }
                  }}
                >
                  Apply
                </button>
              )}
            </>
          )}
          {report && (
            <p className="flash flash-ok" role="status">
              {report}
            </p>
          )}
        </>
      )}
    </>
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

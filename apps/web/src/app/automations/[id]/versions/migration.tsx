"use client";

import type { Migration } from "./use-migration";

/**
 * Moving runs from v`a` to v`b` (optional): map the removed steps, choose what happens to runs on a removed step,
 * see the dry run, then apply.
 */
export function MigrationSection({ m, a, b, removed }: { m: Migration; a: number; b: number; removed: { id: string }[] }) {
  const { rule, plan } = m;
  return (
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
              <input name={`map-${n.id}`} placeholder="(none: apply the rule below)" value={m.mapping[n.id] ?? ""} onChange={(e) => m.mapStep(n.id, e.target.value)} />
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
              const k = e.target.value;
              m.chooseRule(k === "move" ? { kind: "move", to: "" } : k === "cancel" ? { kind: "cancel" } : { kind: "stay" });
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
            <input name="move-to" value={rule.to} onChange={(e) => m.chooseRule({ kind: "move", to: e.target.value.trim() })} />
          </label>
        )}
        <button type="button" onClick={m.dryRun}>
          Dry run
        </button>
      </div>
      {plan.isError && <p className="flash flash-error">{plan.error.message}</p>}
      {plan.data && (
        <>
          <DryRunTable positions={plan.data.positions} />
          {plan.data.runs.length === 0 ? (
            <p className="muted">No runs of v{a} are in flight.</p>
          ) : (
            <button type="button" className="primary" disabled={m.applying} onClick={m.applyPlanned}>
              Apply
            </button>
          )}
        </>
      )}
      {m.report && (
        <p className="flash flash-ok" role="status">
          {m.report}
        </p>
      )}
    </>
  );
}

type Position = NonNullable<Migration["plan"]["data"]>["positions"][number];

/** The dry run: how many runs sit on each step and where each would land. */
function DryRunTable({ positions }: { positions: Position[] }) {
  return (
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
        {positions.map((p) => (
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
  );
}

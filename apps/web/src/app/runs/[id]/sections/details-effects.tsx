import type { EffectView } from "../../../../server/runs";
import { Json, StatusBadge } from "../../../ui";

/** Details: the run's calls to providers, by key, with the provider's answer. */
export function EffectsTable({ effects }: { effects: EffectView[] }) {
  if (effects.length === 0) return null;
  return (
    <>
      <h2>Effects</h2>
      <table className="effects">
        <thead>
          <tr>
            <th>Key</th>
            <th>Kind</th>
            <th>State</th>
            <th>Attempts</th>
            <th>Provider's answer</th>
          </tr>
        </thead>
        <tbody>
          {effects.map((e) => (
            <tr key={e.key}>
              <td className="mono small wrap">{e.key}</td>
              <td>{e.kind}</td>
              <td>
                <StatusBadge status={e.status} />
                {e.providerIdempotent === false ? <div className="small muted">provider cannot deduplicate</div> : null}
              </td>
              <td>{e.attempts}</td>
              <td>{e.error ? <Json value={e.error} /> : <Json value={e.result} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

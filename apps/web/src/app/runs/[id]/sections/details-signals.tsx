import type { SignalView } from "../../../../server/runs";
import { Json } from "../../../ui";
import type { When } from "./time";

/** Details: the signals (replies, events) the run received, consumed or ignored. */
export function SignalsTable({ signals, when }: { signals: SignalView[]; when: When }) {
  if (signals.length === 0) return null;
  return (
    <>
      <h2>Signals</h2>
      <table>
        <thead>
          <tr>
            <th>Kind</th>
            <th>Identity</th>
            <th>Received</th>
            <th>Consumed</th>
            <th>Payload</th>
          </tr>
        </thead>
        <tbody>
          {signals.map((g) => (
            <tr key={g.id}>
              <td>{g.kind}</td>
              <td className="mono small wrap">{g.identity}</td>
              <td>
                {when(g.receivedAt)}
              </td>
              <td>{g.unmatchedReason ? <span className="field-error">Ignored: {g.unmatchedReason}</span> : when(g.consumedAt)}</td>
              <td>
                <Json value={g.payload} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

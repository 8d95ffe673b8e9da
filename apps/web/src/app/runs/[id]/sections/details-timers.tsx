import type { TimerView } from "../../../../server/runs";
import { Json } from "../../../ui";
import type { When } from "./time";

/** Details: the run's timers, when each was due and fired, by whom and how late. */
export function TimersTable({ timers, when }: { timers: TimerView[]; when: When }) {
  if (timers.length === 0) return null;
  return (
    <>
      <h2>Timers</h2>
      <table className="timers">
        <thead>
          <tr>
            <th>Intent</th>
            <th>Zone</th>
            <th>Due</th>
            <th>Fired</th>
            <th>By / lateness</th>
          </tr>
        </thead>
        <tbody>
          {timers.map((t) => (
            <tr key={t.id}>
              <td>
                <Json value={t.rule} />
              </td>
              <td>{t.zone}</td>
              <td>
                {when(t.dueAt)}
              </td>
              <td>
                {when(t.firedAt)}
              </td>
              <td className="small">
                {t.firedBy ?? "-"}
                {t.latenessMs !== null ? ` · ${Math.round(t.latenessMs)} ms late` : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

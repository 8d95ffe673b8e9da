import type { TimelineEntry } from "@holdfast/core/store";
import { InlineJson } from "../../../ui";
import type { When } from "./time";

/** Details: the run's full timeline, one row per event, times in the viewer's zone. */
export function TimelineTable({ timeline, viewer, when }: { timeline: TimelineEntry[]; viewer: string; when: When }) {
  return (
    <>
      <h2>Timeline</h2>
      <table className="timeline">
        <thead>
          <tr>
            <th>Time ({viewer})</th>
            <th>What</th>
            <th>Step</th>
            <th>Attempt</th>
            <th>Lane</th>
            <th>Who</th>
            <th>Details</th>
          </tr>
        </thead>
        <tbody>
          {timeline.map((e) => (
            <tr key={`${e.id}:${e.type}`} data-type={e.type}>
              <td>
                {when(e.at)}
              </td>
              <td className="mono">{e.type}</td>
              <td className="mono">{e.nodeId ?? "-"}</td>
              <td>{e.attempt ?? "-"}</td>
              <td>{e.lane ?? "-"}</td>
              <td className="mono small">{e.worker ?? "-"}</td>
              <td className="small">
                <InlineJson value={e.data} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

import type { Story } from "@holdfast/core/story";
import type { RunDetail } from "../../../../server/runs";
import { GraphView } from "../../graph-view";

/** The version's graph with the path the run took drawn bold (nothing when the graph could not be read). */
export function PathTaken({ graph, steps, path }: { graph: RunDetail["graph"]; steps: RunDetail["steps"]; path: Story["path"] }) {
  if (!graph) return null;
  const latest = new Map<string, string>();
  for (const s of steps) latest.set(s.nodeId, s.status);
  return (
    <section aria-label="path taken">
      <h2>Path taken</h2>
      {/* A long journey scrolls sideways: the keyboard reaches it (Tab, then the arrow keys) as the mouse does. */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolled region must take the focus to be scrolled by keyboard */}
      <section className="graph-wrap" tabIndex={0} aria-label="The journey's steps, the path taken in bold">
        <GraphView graph={graph} latest={latest} path={path} />
      </section>
    </section>
  );
}

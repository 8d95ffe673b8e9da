import { isStepKind, kindOf } from "../../versions/kinds/registry";
import type { StoryGraph } from "./story-types";
import { actorWords, stepNames } from "./story-words";

/**
 * "Fire this wait now", the parts that decide without the database: which steps it applies to, who may, and what
 * the person is told before confirming. Pure (the run page renders it; run/runs/fire-wait.ts carries it out).
 */

/**
 * The waits a person may end early: a Wait, and a Wait for reply (ended early it gives up on the reply and takes its
 * timeout path, as its deadline would). An approval's deadline is a timer too, but passing it is a decision with its
 * own rule (escalate, default, stop): not a wait to skip.
 */
export const fireableWaitKinds: readonly string[] = ["wait", "wait_for_reply"];

/** Owners only: it changes what a real run does next, for a customer, on a person's word. */
export function mayFireWaits(role: string | undefined): boolean {
  return role === "owner";
}

export const fireWaitRoleWords = "Only owners can fire a wait early.";

/** The nodes the run goes to when the wait `nodeId` fires: along the edge its timeout takes (versions/kinds/*.ts edgeFor). */
function nextNodes(graph: StoryGraph, nodeId: string): StoryGraph["nodes"] {
  const node = graph.nodes.find((n) => n.id === nodeId);
  const kind = kindOf(node?.kind ?? "");
  const label = isStepKind(kind) ? kind.edgeFor?.({ outcome: "timeout" }) : undefined;
  const ids = graph.edges.filter((e) => e.from === nodeId && (label === undefined || e.label === label)).map((e) => e.to);
  return graph.nodes.filter((n) => ids.includes(n.id));
}

/** The sentence a person confirms: what happens at once when the wait `nodeId` fires now. */
export function fireWaitConfirmation(graph: StoryGraph, nodeId: string): string {
  const node = graph.nodes.find((n) => n.id === nodeId);
  const name = stepNames(graph);
  const next = nextNodes(graph, nodeId);
  const then =
    next.length === 0
      ? "the run then has nothing left to do"
      : next.every((n) => n.kind === "end")
        ? "the run ends at once"
        : `the next step, ${next.map((n) => name({ nodeId: n.id, kind: n.kind })).join(" or ")}, runs at once`;
  return node?.kind === "wait_for_reply"
    ? `The run stops waiting for the reply and takes its timeout path now, as if no reply had come in time: ${then}.`
    : `The run continues now as if the wait had ended: ${then}.`;
}

/** An outcome of `fireWaitNow` (run/runs/fire-wait.ts), as its fields. */
export type FireWaitResult =
  | { kind: "fired"; nodeId: string; dueAt: Date; firedAt: Date; status: string }
  | { kind: "already_fired"; nodeId: string; dueAt: Date; firedAt: Date; firedBy: string; how: "early" | "due"; reason: string | null };

/** The outcome in a sentence, instants written by `when` (the page: the viewer's zone; the CLI: UTC). */
export function fireWaitWords(o: FireWaitResult, when: (d: Date) => string = utc): string {
  if (o.kind === "fired") {
    const after = o.status === "running" ? "the run goes on from here" : `the run is ${o.status}`;
    return `Fired: the wait at "${o.nodeId}" ended at ${when(o.firedAt)} instead of ${when(o.dueAt)}; ${after}.`;
  }
  if (o.how === "early") {
    return `Already fired at ${when(o.firedAt)} by ${actorWords(o.firedBy)}${o.reason ? `: "${o.reason}"` : ""} (it was due ${when(o.dueAt)}). Nothing was done again.`;
  }
  return `The wait at "${o.nodeId}" had already ended on time at ${when(o.firedAt)}. Nothing was done again.`;
}

const utc = (d: Date) => `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;

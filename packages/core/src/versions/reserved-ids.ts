import { kindOf } from "./kinds/registry";
import type { PublishedStepId } from "../store/sql/automation-versions";
import type { GraphProblem } from "./graph";

const why = "is reserved for the automation's life (its runs' history and effect keys name it)";
const label = (kind: string) => `"${kindOf(kind)?.label ?? kind}"`;

/**
 * A published step id names one step for the automation's life: runs' history, and effect keys (run/node/iteration)
 * that a run migrated to a newer version keeps, would otherwise belong to two different steps. So a draft may keep
 * an id of the newest version for a step of the same kind, and may not bring back an id a version used and a later
 * one dropped, nor give a published id to a different kind of step. Pure.
 */
export function reservedIdProblems(graph: { nodes: { id: string; kind: string }[] }, published: PublishedStepId[]): GraphProblem[] {
  const byId = new Map(published.map((p) => [p.id, p]));
  const problems: GraphProblem[] = [];
  for (const node of graph.nodes) {
    const used = byId.get(node.id);
    if (!used) continue;
    if (!used.inNewest) {
      problems.push({
        path: `node:${node.id}.id`,
        message: `the step id "${node.id}" was used by version ${used.lastVersion} for its ${label(used.kind)} step and ${why}: give this step a new id`,
      });
    } else if (used.kind !== node.kind) {
      problems.push({
        path: `node:${node.id}.id`,
        message: `the step id "${node.id}" is the ${label(used.kind)} step of version ${used.lastVersion} and ${why}: give this ${label(node.kind)} step a new id`,
      });
    }
  }
  return problems;
}

/**
 * An effect's identity: run/node/iteration. Never the attempt: every retry of the same effect must carry the same
 * key so the provider (or a reconciliation read) can recognise it. The iteration keeps loop visits apart.
 */
export function effectKey(runId: string, nodeId: string, iteration: number): string {
  return `${runId}/${nodeId}/${iteration}`;
}

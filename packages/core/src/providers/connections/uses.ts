import type { ConnectionUseRow } from "../../store/sql/connections";

/**
 * Which published versions still reach a connection, and what that means for a rename or a delete. Pure: the rows
 * come from store/sql/connections.ts (connectionsUsedByVersions, connectionsNamedByDrafts).
 *
 * Published graphs name their connections, and a version can still run while it is its automation's newest (new runs
 * start on it) or while runs are still running on it. An older version nothing runs on any more cannot reach a
 * connection, so it does not hold one: otherwise a connection once used could never be deleted.
 */
export interface ConnectionUse {
  automationId: string;
  automationName: string;
  version: number;
  latest: boolean;
  running: number;
}

export function liveUses(rows: readonly ConnectionUseRow[], name: string): ConnectionUse[] {
  return rows
    .filter((r) => r.name === name && (r.latest || r.running > 0))
    .map(({ automationId, automationName, version, latest, running }) => ({ automationId, automationName, version, latest, running }));
}

const runs = (n: number) => `${n} run${n === 1 ? "" : "s"}`;

/** `automation "Nurture" version 3`, with the runs still on an older version. */
export function useWords(u: ConnectionUse): string {
  return `automation "${u.automationName}" version ${u.version}${u.latest ? "" : ` (${runs(u.running)} still running on it)`}`;
}

/** "a", "a and b", "a, b and c". */
export function listWords(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

export function deleteRefusal(name: string, uses: readonly ConnectionUse[]): string | null {
  if (uses.length === 0) return null;
  const older = uses.some((u) => !u.latest);
  return (
    `"${name}" cannot be deleted while ${listWords(uses.map(useWords))} ${uses.length === 1 ? "uses" : "use"} it: ` +
    `publish ${uses.length === 1 ? "a version" : "versions"} that use${uses.length === 1 ? "s" : ""} another connection` +
    `${older ? " and let the runs on older versions finish" : ""}, then delete it.`
  );
}

export function renameRefusal(name: string, uses: readonly ConnectionUse[]): string | null {
  if (uses.length === 0) return null;
  return (
    `"${name}" cannot be renamed while ${listWords(uses.map(useWords))} ${uses.length === 1 ? "uses" : "use"} it: published versions ` +
    `find their connections by name. Add a connection with the new name instead, publish versions that use it, then delete "${name}".`
  );
}

/** What drafts still say after a rename or a delete (they are saved, not published: nothing breaks yet). */
export function draftsNote(name: string, drafts: readonly string[], renamedTo: string | null): string | null {
  if (drafts.length === 0) return null;
  const which = `The draft${drafts.length === 1 ? "" : "s"} of ${listWords(drafts.map((d) => `"${d}"`))} still name${drafts.length === 1 ? "s" : ""} "${name}"`;
  return renamedTo === null ? `${which}: pick another connection in ${drafts.length === 1 ? "its" : "their"} steps before publishing.` : `${which}: pick "${renamedTo}" in ${drafts.length === 1 ? "its" : "their"} steps before publishing.`;
}

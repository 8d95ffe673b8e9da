import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * docs/state-machine.md against the code: each Mermaid diagram names exactly the statuses its table's CHECK constraint
 * allows (prisma/schema.sql, the dump of the migrations) and, where core declares a type for them, that type's
 * members; every status is reachable from the start. The statuses are read from the schema and the source, never
 * copied here.
 */

const repo = resolve(import.meta.dirname, "../../..");
const schema = readFileSync(join(repo, "prisma/schema.sql"), "utf8");
const doc = readFileSync(join(repo, "docs/state-machine.md"), "utf8");

/** The values of `CONSTRAINT <table>_status_check CHECK ((status = ANY (ARRAY['a'::text, ...])))`. */
function checkStatuses(sql: string, table: string): string[] {
  const m = new RegExp(`CONSTRAINT ${table}_status_check CHECK \\(\\(status = ANY \\(ARRAY\\[([^\\]]*)\\]`).exec(sql);
  if (!m?.[1]) throw new Error(`no ${table}_status_check in prisma/schema.sql`);
  return [...m[1].matchAll(/'([^']+)'::text/g)].map((v) => v[1] as string).sort();
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}
const coreSources = sourceFiles(join(repo, "packages/core/src")).map((path) => readFileSync(path, "utf8"));

/** The members of `export type <name> = "a" | "b" ...;` wherever it is declared in core (the file may move). */
function typeMembers(sources: string[], name: string): string[] {
  for (const text of sources) {
    const m = new RegExp(`export type ${name} =([^;]+);`).exec(text);
    if (m?.[1]) return [...m[1].matchAll(/"([^"]+)"/g)].map((v) => v[1] as string).sort();
  }
  throw new Error(`no "export type ${name}" in packages/core/src`);
}

interface Diagram {
  table: string;
  states: string[];
  edges: [string, string][];
}

/** The stateDiagram-v2 blocks of a Markdown text, each labelled by its `%% table: <name>` comment. */
function diagrams(markdown: string): Diagram[] {
  return [...markdown.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((block) => {
    const lines = (block[1] as string).split("\n").map((l) => l.trim());
    if (lines[0] !== "stateDiagram-v2") throw new Error(`a Mermaid block that is not stateDiagram-v2: ${lines[0]}`);
    const table = lines.map((l) => /^%% table: (\w+)$/.exec(l)?.[1]).find(Boolean);
    if (!table) throw new Error("a state diagram without its %% table: comment");
    const edges: [string, string][] = [];
    const states = new Set<string>();
    for (const line of lines) {
      const named = /^state\s+(?:"[^"]*"\s+as\s+)?(\w+)/.exec(line) ?? /^(\w+)\s*:/.exec(line);
      if (named?.[1] && !line.includes("-->")) states.add(named[1]);
      const edge = /^(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)/.exec(line);
      if (!edge) continue;
      const [from, to] = [edge[1] as string, edge[2] as string];
      edges.push([from, to]);
      for (const s of [from, to]) if (s !== "[*]") states.add(s);
    }
    return { table, states: [...states].sort(), edges };
  });
}

function reachable(d: Diagram): string[] {
  const seen = new Set<string>(["[*]"]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [from, to] of d.edges) {
      if (seen.has(from) && !seen.has(to)) {
        seen.add(to);
        grew = true;
      }
    }
  }
  return [...seen].filter((s) => s !== "[*]").sort();
}

const tables: { table: string; type?: string }[] = [{ table: "runs" }, { table: "steps", type: "StepStatus" }, { table: "effects", type: "EffectStatus" }];

describe("docs/state-machine.md", () => {
  const found = diagrams(doc);

  it("has one state diagram for each of runs, steps and effects", () => {
    expect(found.map((d) => d.table).sort()).toEqual(tables.map((t) => t.table).sort());
  });

  for (const { table, type } of tables) {
    it(`names exactly the statuses of ${table}.status in the schema${type ? ` and ${type}` : ""}`, () => {
      const diagram = found.find((d) => d.table === table);
      expect(diagram, `no diagram for ${table}`).toBeDefined();
      const fromSchema = checkStatuses(schema, table);
      expect(diagram?.states, `diagram of ${table} against ${table}_status_check`).toEqual(fromSchema);
      if (type) expect(diagram?.states, `diagram of ${table} against core's ${type}`).toEqual(typeMembers(coreSources, type));
    });

    it(`reaches every status of ${table} from the start, and ends`, () => {
      const diagram = found.find((d) => d.table === table) as Diagram;
      expect(reachable(diagram)).toEqual(diagram.states);
      expect(diagram.edges.some(([, to]) => to === "[*]")).toBe(true);
    });
  }

  it("catches a status missing from a diagram and one the code does not have", () => {
    const steps = diagrams(doc).find((d) => d.table === "steps") as Diagram;
    const statuses = checkStatuses(schema, "steps");
    const without = diagrams(doc.replace(/^ {2}\w+ --> parked.*\n|^ {2}parked --> .*\n/gm, "")).find((d) => d.table === "steps") as Diagram;
    expect(without.states).not.toEqual(statuses);
    const extra = diagrams(doc.replace("%% table: steps\n", "%% table: steps\n  ready --> paused : not a status\n")).find((d) => d.table === "steps") as Diagram;
    expect(extra.states).not.toEqual(statuses);
    expect(steps.states).toEqual(statuses);
  });
});

import { describe, expect, it } from "vitest";
import { choosePath, splitSubject } from "../src/decide/walk/split";
import { decide, type RunState } from "../src/decide/walk/walk";
import { graphProblems, graphSchema, parseGraph } from "../src/versions/graph";
import { split, splitConfig } from "../src/versions/kinds/split";

const fifty = { paths: { A: 50, B: 50 } };

describe("the A/B split's chooser", () => {
  it("gives the same path for the same contact and step, whatever the order of the paths in the config", () => {
    const reordered = { paths: { B: 50, A: 50 } };
    for (let i = 0; i < 200; i++) {
      const who = `contact:lead${i}@example.com`;
      const first = choosePath(fifty, who, "pick");
      expect(choosePath(fifty, who, "pick")).toBe(first);
      expect(choosePath(reordered, who, "pick")).toBe(first);
    }
  });

  it("follows the weights within a few percent over 10,000 contacts", () => {
    const config = { paths: { A: 70, B: 20, C: 10 } };
    const counts: Record<string, number> = { A: 0, B: 0, C: 0 };
    for (let i = 0; i < 10_000; i++) {
      const path = choosePath(config, `contact:person${i}@example.org`, "pick");
      counts[path] = (counts[path] ?? 0) + 1;
    }
    expect(Math.abs((counts.A as number) / 10_000 - 0.7)).toBeLessThan(0.02);
    expect(Math.abs((counts.B as number) / 10_000 - 0.2)).toBeLessThan(0.02);
    expect(Math.abs((counts.C as number) / 10_000 - 0.1)).toBeLessThan(0.02);
  });

  it("chooses a path of weight 1 in 100 sometimes (about 1 in 100), never always", () => {
    const config = { paths: { rare: 1, usual: 99 } };
    let rare = 0;
    for (let i = 0; i < 10_000; i++) if (choosePath(config, `contact:x${i}@example.com`, "pick") === "rare") rare += 1;
    expect(rare).toBeGreaterThan(50);
    expect(rare).toBeLessThan(160);
  });

  it("another split step sends a contact its own way (the node id is part of the choice)", () => {
    let differs = 0;
    for (let i = 0; i < 1000; i++) if (choosePath(fifty, `contact:c${i}@example.com`, "first") !== choosePath(fifty, `contact:c${i}@example.com`, "second")) differs += 1;
    expect(differs).toBeGreaterThan(400);
    expect(differs).toBeLessThan(600);
  });

  it("knows a run by its contact's email, lower-cased, where the trigger says; else by its input", () => {
    expect(splitSubject({ contactEmailField: "email" }, { email: " Ada@Example.COM " })).toBe("contact:ada@example.com");
    expect(splitSubject({ contactEmailField: "lead.mail" }, { lead: { mail: "b@x.io" } })).toBe("contact:b@x.io");
    expect(splitSubject({ contactEmailField: "email", fields: [{ name: "work", role: "email" }] } as never, { work: "w@x.io", email: "e@x.io" })).toBe("contact:w@x.io");
    // No contact: the input itself, whatever order its keys come back in.
    expect(splitSubject({ contactEmailField: "email" }, { b: 1, a: [2, { d: 3, c: 4 }] })).toBe(splitSubject({ contactEmailField: "email" }, { a: [2, { c: 4, d: 3 }], b: 1 }));
    expect(splitSubject({ contactEmailField: "email" }, { email: "not an address" })).toMatch(/^input:/);
  });
});

describe("the A/B split kind", () => {
  const problems = (config: unknown) => (splitConfig.safeParse(config).error?.issues ?? []).map((i) => i.message);

  it("takes two or more named paths with whole-number weights above 0 (a form's text weights too)", () => {
    expect(splitConfig.parse({ paths: { A: "60", B: 40 } })).toEqual({ paths: { A: 60, B: 40 } });
    expect(problems({ paths: { A: 100 } })).toContain("an A/B split needs at least two paths");
    expect(problems({ paths: { A: 0, B: 100 } })).toContain("every path's weight is at least 1");
    expect(problems({ paths: { A: 1.5, B: 100 } })).toContain("a path's weight is a whole number, such as 50");
    expect(problems({ paths: { A: 50, a: 50 } })).toContain("each path needs its own name (A and a count as the same)");
    expect(problems({ paths: { "A B": 50, C: 50 } })[0]).toMatch(/a path's name/);
    expect(split.summary(splitConfig.parse({ paths: { A: 1, B: 3 } }))).toBe("Split A 25%, B 75%");
  });

  const graph = (edges: { from: string; to: string; label?: string }[]) =>
    graphSchema.parse({
      nodes: [
        { id: "t", kind: "trigger" },
        { id: "pick", kind: "split", config: { paths: { A: 50, B: 30, C: 20 } } },
        { id: "a", kind: "end" },
        { id: "b", kind: "end" },
      ],
      edges: [{ from: "t", to: "pick" }, ...edges],
    });

  it("needs exactly one edge out for each path, said in plain words", () => {
    const message = 'A/B split needs exactly one edge for each of its paths ("A", "B", "C"), and no other';
    expect(graphProblems(graph([{ from: "pick", to: "a", label: "A" }, { from: "pick", to: "b", label: "B" }]))).toContainEqual({ path: "node:pick", message });
    expect(
      graphProblems(graph([{ from: "pick", to: "a", label: "A" }, { from: "pick", to: "b", label: "B" }, { from: "pick", to: "b", label: "C" }, { from: "pick", to: "b", label: "D" }])),
    ).toContainEqual({ path: "node:pick", message });
    expect(graphProblems(graph([{ from: "pick", to: "a", label: "A" }, { from: "pick", to: "b", label: "B" }, { from: "pick", to: "b", label: "C" }]))).toEqual([]);
  });
});

describe("the walk at an A/B split", () => {
  const g = parseGraph({
    nodes: [
      { id: "t", kind: "trigger" },
      { id: "pick", kind: "split", config: { paths: { A: 50, B: 50 } } },
      { id: "call_a", kind: "http_request", config: { url: "http://127.0.0.1:1/a" } },
      { id: "call_b", kind: "http_request", config: { url: "http://127.0.0.1:1/b" } },
      { id: "done", kind: "end" },
    ],
    edges: [
      { from: "t", to: "pick" },
      { from: "pick", to: "call_a", label: "A" },
      { from: "pick", to: "call_b", label: "B" },
      { from: "call_a", to: "done" },
      { from: "call_b", to: "done" },
    ],
  });
  const run = (email: string): RunState => ({ id: "", status: "running", input: { email }, cancelRequested: false, steps: [] });

  it("records the path it chose and schedules the step on that path; the same contact walks the same way again", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const email = `Lead${i}@Example.com`;
      const path = choosePath({ paths: { A: 50, B: 50 } }, `contact:${email.toLowerCase()}`, "pick");
      const commands = decide(g, run(email));
      const next = path === "A" ? "call_a" : "call_b";
      expect(commands.slice(1)).toEqual([
        { type: "take_edge", from: "t", label: null, to: "pick" },
        { type: "record", event: "split.chosen", nodeId: "pick", data: { path } },
        // Out of the split: its count names the run (the path a later reply or click is counted on).
        { type: "take_edge", from: "pick", label: path, to: next, split: true },
        expect.objectContaining({ type: "schedule_step", nodeId: next }),
      ]);
      // A repeated delivery, a retry's re-walk or a wake-up with the same input: the same commands.
      expect(decide(g, { ...run(email.toLowerCase()), id: "run_other" })).toEqual(commands);
      seen.add(path);
    }
    expect([...seen].sort()).toEqual(["A", "B"]);
  });
});

import { splitGraph } from "@holdfast/testkit";
import { describe, expect, it } from "vitest";
import { choosePath } from "../src/decide/walk/split";
import { previewJourney } from "../src/run/preview/journey";
import { buildStory } from "../src/run/runs/story";
import type { StoryEvent, StoryInput } from "../src/run/runs/story-types";

/** What people read about an A/B split: the run page's story and the editor's preview. */

const graph = splitGraph({ A: 50, B: 50 }, { contactEmailField: "email" });

const at = new Date("2026-12-02T10:00:00Z");
const ev = (type: string, over: Partial<StoryEvent> = {}): StoryEvent => ({ at, type, stepId: null, nodeId: null, attempt: null, worker: null, data: null, ...over });

describe("an A/B split in words", () => {
  it("the run page says which path the run took, with the weights, and highlights it", () => {
    const input: StoryInput = {
      run: { id: "run_1", status: "completed", input: { email: "lena@example.com" }, error: null, cancelRequestedAt: null, cancelReason: null, createdAt: at, finishedAt: at },
      steps: [],
      timeline: [ev("split.chosen", { nodeId: "pick", data: { path: "B" } }), ev("run.completed", { nodeId: "end_b" })],
      timers: [],
      approvals: [],
      signals: [],
      graph,
      contact: { email: "lena@example.com", timeZone: null },
      viewerZone: "UTC",
    };
    const story = buildStory(input);
    expect(story.sentences.map((s) => s.text)).toEqual(['Took path B of the A/B split at "pick" (weights 50/50)']);
    expect(story.path.nodes).toEqual(["t", "pick", "end_b"]);
    expect(story.path.edges).toEqual(["t->pick", "pick->end_b"]);
  });

  it("the editor's preview says which path the sample's contact takes, the chooser's own", () => {
    for (const email of ["ann@example.test", "bo@example.test", "cy@example.test", "di@example.test"]) {
      const path = choosePath({ paths: { A: 50, B: 50 } }, `contact:${email}`, "pick");
      const p = previewJourney(graph, { input: { email: email.toUpperCase() } }, at, {});
      expect(p.steps.map((s) => s.nodeId)).toEqual(["t", "pick", path === "A" ? "end_a" : "end_b"]);
      expect(p.steps[1]?.detail).toEqual({ kind: "split", path, weights: "50/50", to: path === "A" ? "end_a" : "end_b" });
      expect(p.steps[1]?.words).toBe(`${email} takes path ${path} (weights 50/50), to ${path === "A" ? "end_a" : "end_b"}; always the same path for this contact.`);
    }
  });
});

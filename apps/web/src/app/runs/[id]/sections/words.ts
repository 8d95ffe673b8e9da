import type { TimelineEntry } from "@holdfast/core/store";
import type { StepView } from "../../../../server/runs";

/** The run the page's forms act on (hidden fields of every form). */
export interface RunRef {
  runId: string;
  orgId: string;
}

/** Attempts of each step, from its timeline: who claimed it when, and how each attempt ended. */
export function attemptsOf(step: StepView, timeline: TimelineEntry[]): TimelineEntry[] {
  return timeline.filter((e) => e.stepId === step.id && (e.type.startsWith("step.") || e.type.startsWith("effect.") || e.type.startsWith("review.")));
}

/** Repeated deliveries of the run's start key: counted on the run (the timeline keeps only the first few). */
export function repeatsWords(n: number): string {
  return n === 1
    ? "The trigger delivered this event twice; the repeat started nothing new."
    : `The trigger delivered this event ${(n + 1).toLocaleString("en")} times; the ${n.toLocaleString("en")} repeats started nothing new.`;
}

/** The mark beside each sentence of the story, by its tone. */
export const toneMark: Record<string, string> = { done: "✓", waiting: "◷", working: "…", warning: "!", failed: "✗", stopped: "■" };

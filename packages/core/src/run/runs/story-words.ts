import { kindOf } from "../../versions/kinds/registry";
import { durationWords } from "../../versions/kinds/words";
import type { StoryGraph, StoryStep } from "./story-types";

/** The small words of a run's story: money, lateness, attempts, who acted, a step's name. */

/** "$0.000027", "$0.0013", "$1.25" from micro-dollars: two significant digits under a dollar (a draft costs little). */
export function usd(micros: number): string {
  const v = micros / 1e6;
  if (v <= 0) return "$0";
  return v >= 1 ? `$${v.toFixed(2)}` : `$${Number(v.toPrecision(2))}`;
}

/** Seconds late, as words: "fired 0.1 s late", "fired on time". */
export function latenessWords(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "fired";
  if (ms < 50) return "fired on time";
  if (ms < 60_000) return `fired ${(ms / 1000).toFixed(1)} s late`;
  return `fired ${durationWords(Math.round(ms / 1000))} late`;
}

/** Real attempts (the claim token less deferrals) of the most: "attempt 2 of 3". */
export function attemptWords(step: Pick<StoryStep, "attempt" | "maxAttempts" | "deferrals">): string {
  const real = Math.max(1, step.attempt - (step.deferrals ?? 0));
  return `attempt ${real} of ${Math.max(step.maxAttempts, real)}`;
}

/** "user:sam@acme.test" -> "sam@acme.test"; "slack:usr_1" -> "Slack user usr_1". */
export function actorWords(worker: string | null | undefined): string {
  if (!worker) return "someone";
  const [kind, ...rest] = worker.split(":");
  const who = rest.join(":");
  if (!who) return worker;
  if (kind === "user" || kind === "inbox") return who;
  if (kind === "cli") return `${who} (CLI)`;
  if (kind === "slack") return `${who} (Slack)`;
  return worker;
}

/** Quoted, cut at 80 characters. */
export const quote = (s: string) => `"${s.length > 80 ? `${s.slice(0, 79)}…` : s}"`;

/** A step as people call it: the name its author gave ("Update the CRM"), else its kind and id (Update CRM "crm"). */
export const stepNames = (graph: StoryGraph | null) => (s: Pick<StoryStep, "nodeId" | "kind">) => {
  const named = graph?.nodes.find((n) => n.id === s.nodeId)?.name?.trim();
  return named ? `"${named}"` : `${kindOf(s.kind)?.label ?? s.kind} "${s.nodeId}"`;
};

export const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

import type { StepErrorLike } from "./why";

/** The rows a run's story is told from (StoryInput) and the story itself (Story), as run/runs/story.ts builds it. */

export interface StoryRun {
  id: string;
  status: string;
  /** Its automation is paused with its runs held (runs.held_at). */
  held?: boolean;
  input?: unknown;
  error: unknown;
  cancelRequestedAt: Date | null;
  cancelReason: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}
export interface StoryStep {
  id: string;
  nodeId: string;
  iteration: number;
  kind: string;
  status: string;
  attempt: number;
  maxAttempts: number;
  /** Times given back unstarted (no connection slot): not attempts. */
  deferrals?: number;
  availableAt: Date;
  output: unknown;
  error: StepErrorLike | null;
  createdAt: Date;
  settledAt: Date | null;
}
export interface StoryEvent {
  at: Date;
  type: string;
  stepId: string | null;
  nodeId: string | null;
  attempt: number | null;
  worker: string | null;
  data: Record<string, unknown> | null;
}
export interface StoryTimer {
  stepId: string;
  rule: unknown;
  zone: string;
  dueAt: Date;
  firedAt: Date | null;
  /** Who fired it: a person's "Fire this wait now" names them (with the reason on its timer.fired event). */
  firedBy?: string | null;
  latenessMs: number | null;
}
export interface StoryApproval {
  stepId: string;
  nodeId: string;
  stage: number;
  title: string;
  approvers: { users?: string[]; role?: string };
  onDeadline: unknown;
  status: string;
  decidedByName: string | null;
  decidedVia: string | null;
  decidedAt: Date | null;
  deadlineAt: Date;
}
export interface StorySignal {
  kind: string;
  stepId: string | null;
  receivedAt: Date;
  consumedAt: Date | null;
  payload: unknown;
  unmatchedReason: string | null;
}
export interface StoryGraph {
  nodes: { id: string; kind: string; name?: string | undefined; config?: unknown }[];
  edges: { from: string; to: string; label?: string | undefined }[];
}
export interface StoryInput {
  run: StoryRun;
  steps: StoryStep[];
  timeline: StoryEvent[];
  timers: StoryTimer[];
  approvals: StoryApproval[];
  signals: StorySignal[];
  graph: StoryGraph | null;
  contact: { email: string; timeZone: string | null; id?: string; consent?: string } | null;
  /** The viewer's IANA zone (their browser's); an unknown one reads as UTC. */
  viewerZone: string;
  /** Calls whose outcome nobody knows (effectsUncertainOfRun): a cancelled run with any still needs a person. */
  uncertain?: { key: string; stepId: string | null; nodeId: string | null }[];
}

export type StoryTone = "done" | "waiting" | "working" | "warning" | "failed" | "stopped";
export interface StorySentence {
  stepId: string | null;
  nodeId: string;
  at: Date;
  text: string;
  tone: StoryTone;
}
export type StoryState = "completed" | "running" | "held" | "waiting" | "parked" | "needs_review" | "failed" | "cancelled" | "converted";
/** The buttons that fix it: the page maps each to a form or a link. */
export type StoryAction = "resume" | "resolve" | "raise_budget" | "reconnect" | "retry" | "decide";
export interface StoryStatus {
  state: StoryState;
  text: string;
  todo: string | null;
  actions: StoryAction[];
  /** The step the status is about (a parked or failed step). */
  stepId: string | null;
}
export interface StoryEmail {
  nodeId: string;
  /**
   * recorded: as sent (the step's output); reconstructed: a run sent before outputs recorded the email, rendered
   * again from the step's templates; erased: the contact was erased, nothing of it is left.
   */
  source: "recorded" | "reconstructed" | "erased";
  to: string;
  from: string | null;
  replyTo: string | null;
  messageId: string | null;
  subject: string;
  /** The text body (the HTML one when there is no text). */
  body: string;
  html: string | null;
  sentAt: Date | null;
}
export interface Story {
  status: StoryStatus;
  sentences: StorySentence[];
  /** Nodes and edges ("from->to") the run went through, in order. */
  path: { nodes: string[]; edges: string[] };
  email: StoryEmail | null;
  clock: StoryClock;
}

export interface StoryClock {
  viewer: string;
  contact: string | null;
  /** In the viewer's zone, with the contact's beside: "Mon 1 Dec 08:00 UTC (contact's time 09:00 Europe/Berlin)". */
  when(at: Date): string;
  /** In `zone` first, with the viewer's beside: "Mon 1 Dec 09:00 Europe/Berlin (your time 08:00 UTC)". */
  whenIn(at: Date, zone: string): string;
}

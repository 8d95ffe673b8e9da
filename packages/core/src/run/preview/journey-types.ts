import type { EmailParts } from "../../people/approvals/email";
import type { PreviewInstant } from "../../decide/timers/preview";

/** What the editor's preview is given (a sample, assumptions, the connections) and what it answers (journey.ts). */

export interface PreviewSample {
  /** The trigger's payload. */
  input: unknown;
  /** The run's contact (a contact of Settings); absent: the one the payload names, as a start would find it. */
  contact?: { id?: string; email: string; timeZone: string | null; consent?: string; attributes?: Record<string, unknown> } | null;
}

/** What a preview cannot know, and assumes. */
export interface PreviewAssume {
  approval: "approved" | "rejected";
  reply: boolean;
}

/** The organisation's connections as the preview may show them: names, kinds and settings, never secrets. */
export interface PreviewConnection {
  name: string;
  kind: string;
  config: unknown;
}

export interface MissingValue {
  nodeId: string;
  /** The field of the step's settings ("subject", "fields.company"). */
  field: string;
  path: string;
  words: string;
  /** The reference does not exist at all: a real run stops at this step (its template cannot be filled in). */
  stops: boolean;
}

export interface HttpCall {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

export type StepDetail =
  | { kind: "trigger"; contact: { email: string; timeZone: string | null; consent: string } | null }
  | { kind: "send_email"; email: EmailParts | null; connection: string }
  | { kind: "crm_upsert"; request: HttpCall | null; connection: string }
  | { kind: "http_request"; request: HttpCall }
  | { kind: "model_draft"; prompt: string; system?: string; request: HttpCall | null; connection: string }
  | { kind: "wait"; zone: string; zoneWords: string; instants: PreviewInstant[] }
  | { kind: "wait_for_reply"; replyTo: string; deadline: PreviewInstant }
  | { kind: "branch"; condition: string; result: boolean; edge: string; to: string | null; why: string[] }
  | { kind: "split"; path: string; weights: string; to: string | null }
  | { kind: "approval"; approvers: string; title: string; content: string; email: EmailParts | null; deadline: PreviewInstant }
  | { kind: "end" }
  | { kind: "other" };

export interface StepPreview {
  nodeId: string;
  kind: string;
  /** "✉ Send email" */
  label: string;
  icon: string;
  name: string;
  /** What it would do, in one sentence. */
  words: string;
  /** What the preview assumed where it cannot know (an approval's decision, a reply, a model's answer). */
  assumption?: string;
  /** A real run would stop here, and why. */
  stops?: string;
  missing: MissingValue[];
  detail: StepDetail;
}

export interface JourneyPreview {
  steps: StepPreview[];
  missing: MissingValue[];
  /** How the run would end, in words. */
  outcome: { kind: "completed" | "failed" | "cut"; words: string };
}

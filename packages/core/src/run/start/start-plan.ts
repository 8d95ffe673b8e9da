/** What a start is asked (StartRequest) and what it knows once the request is admitted (StartPlan). */
import type { StartTarget } from "../../store/sql/automations";
import type { Graph } from "../../versions/graph";
import type { Command } from "../../decide/walk/plan";
import type { contactOf } from "./contact-of";
import type { DeliveryFacts, deliveryStatus } from "./deliveries";
import type { SignedHeaders } from "./signature";
import type { StartAuth } from "./trigger-auth";

export interface StartRequest {
  orgSlug: string;
  automationSlug: string;
  /** The body exactly as received: signatures are over these bytes. */
  rawBody: string;
  /**
   * The parsed body, or `UnparsedBody` (a request to the trigger URL): then rawBody is parsed only once the request
   * has passed its credential check, so a sender without the credential costs no parsing whatever its body's shape.
   */
  body: unknown;
  headers: SignedHeaders;
  /** Where the start came from, for the timeline ("webhook", "cli"). */
  via: string;
  /** Who is starting it: an operator (CLI, tests), or an HTTP request that must carry the trigger's credential. */
  auth: StartAuth;
  /**
   * A request to the trigger URL: its delivery row (accepted or duplicate, linked to the run) commits with the
   * start, and the first accepted one's input becomes the automation's sample when it has none.
   */
  delivery?: DeliveryFacts;
  /**
   * The editor's Test run: a fresh start key (never a duplicate), the run marked test, `by` on its timeline. Its
   * effects are simulated with `script` (run/test-runs/script.ts); "Send to me" sends its emails to `sendTo` only. It
   * never writes a contact: a stored one its sample names is linked read only, else the sample's stands in. Its clock
   * starts now, or at `clockStartsAt` (later than now: to try a journey across a daylight-saving change, say).
   */
  test?: { by: string; /** A parsed run/test-runs/script.ts TestScript ({} by default). */ script?: unknown; sendTo?: string | null; clockStartsAt?: Date | null };
  /**
   * "Run again with the same input" (run/runs/retry-run.ts): the new run links to `of`; its start key is fresh per
   * request (`requestKey`), so a repeated click finds the run the first one started.
   */
  rerun?: { of: string; by: string; requestKey: string };
}

/** A trigger request's body not parsed yet: startRun parses it (triggerPayload) after the credential check. */
export class UnparsedBody {
  constructor(readonly contentType: string | null) {}
}


/** What a start knows once its request is admitted: the run to insert, its first walk, and how to record it. */
export interface StartPlan {
  request: StartRequest;
  target: StartTarget;
  graph: Graph;
  body: unknown;
  version: number;
  /** The automation is paused with "hold": the run is accepted and held (re-checked under a lock in the transaction). */
  hold: boolean;
  run: { orgId: string; automationId: string; versionId: string; startKey: string; input: unknown };
  /** An identical-submission key's window: which generation is the run is the database's to decide (in a transaction). */
  windowHours: number | undefined;
  contact: ReturnType<typeof contactOf>;
  eventData: Record<string, unknown>;
  /** The run's first walk (decide/walk/plan.ts planAtStart), made once, whichever way the start is written. */
  walked: Command[];
  delivery: {
    status: typeof deliveryStatus;
    webhookId: string | null;
    contentType: string | null;
    bodyBytes: number;
    sampleIfNone: boolean;
    prune: boolean;
  } | null;
}


import type { Db } from "@holdfast/db";
import { decryptSecret } from "../../providers/connections/secrets";
import { effectKey } from "../../providers/effects/keys";
import { runEffect } from "../../providers/effects/ledger";
import { type ConnectionLimits, limitsOf } from "../../providers/connections/limits";
import { pausedCallsOf, pausedCallsWords } from "../../providers/connections/paused-calls";
import {
  type BreakerState,
  breakerRecord,
  breakerReleaseProbe,
  breakerTakeProbe,
  slotsAcquire,
  slotsExtend,
  slotsRelease,
  stepsResumeParked,
} from "../../store/sql/connection-limits";
import { type ConnectionKind, type ConnectionRow, connectionsByName, connectionsMarkNeedsReconnect } from "../../store/sql/connections";
import { contactsOfRun } from "../../store/sql/contacts";
import { templateContact } from "../../base/templates/contact";
import type { ClaimedStep } from "../../store/sql/steps";
import type { StepOutcome } from "../../base/outcome/outcome";
import type { TemplateContext } from "../../base/templates/render";
import type { GraphNode } from "../../versions/graph";
import { type Simulation, simulationFor } from "./simulate";

/**
 * One interface for every outside effect. A connector performs with the effect key as the provider's idempotency
 * key, may reconcile by key (look the effect up at the provider), and classifies its errors into the outcome kinds:
 * retry (with the provider's Retry-After when rate-limited), fail with `authorisation` (never retried: the step is
 * parked and the connection marked), or fail `permanent`. `connectorHandler` puts it on the effect ledger.
 */
export interface ConnectorContext<N extends GraphNode = GraphNode> {
  db: Db;
  step: ClaimedStep;
  node: N;
  signal: AbortSignal;
  /** The organisation's connection the node names, with its secret decrypted; null for kinds without one. */
  connection: (ConnectionRow & { password: string | null }) | null;
  /** What templates see: input, contact (as it is now), earlier steps' outputs, run id. */
  templates(): Promise<TemplateContext>;
  /** A test run's stand-in for the provider (simulate.ts); null for a real run. */
  simulation: Simulation | null;
}

export interface Connector<K extends GraphNode["kind"] = GraphNode["kind"]> {
  kind: K;
  /** The connection a node names; `name` null: this node uses none (an http_request without credentials). */
  connection: { kind: ConnectionKind; name(node: Extract<GraphNode, { kind: K }>): string | null } | null;
  /** The provider returns the first result for a repeated key: an uncertain attempt may be re-sent. */
  providerIdempotent(ctx: ConnectorContext<Extract<GraphNode, { kind: K }>>): boolean;
  /** Must `await begin()` right before calling the provider, and stop with `takenOver` when it says false. */
  perform(ctx: ConnectorContext<Extract<GraphNode, { kind: K }>>, key: string, begin: () => Promise<boolean>): Promise<StepOutcome>;
  reconcile?(ctx: ConnectorContext<Extract<GraphNode, { kind: K }>>, key: string): Promise<unknown | null>;
}

/** begin() said false: another attempt took the effect over before this one called the provider. */
export const takenOver = (key: string): StepOutcome => ({
  kind: "retry",
  error: { code: "effect_taken_over", message: `effect ${key} is held by another attempt`, notPerformed: true },
});

/** The effect owner token of one attempt of a step. */
export const effectOwner = (step: Pick<ClaimedStep, "id" | "attempt">) => `${step.id}:${step.attempt}`;

export async function templateContext(db: Db, step: ClaimedStep): Promise<TemplateContext> {
  const contact = await contactsOfRun(db, step.orgId, step.runId);
  const steps: TemplateContext["steps"] = {};
  for (const s of [...step.runSteps].sort((a, b) => a.iteration - b.iteration)) {
    if (s.status === "done") steps[s.nodeId] = { output: s.output };
  }
  return {
    input: step.input,
    contact: contact ? templateContact(contact) : null,
    steps,
    run: { id: step.runId },
  };
}

/** Parks the step on a connection until a person reconnects it (or the probe sees it working again). */
export const parkOnConnection = (connection: Pick<ConnectionRow, "id" | "name">, reason: string): StepOutcome => ({
  kind: "park",
  error: { code: "needs_reconnect", message: reason, reason, connectionId: connection.id, connection: connection.name },
});

export interface HandlerContext {
  db: Db;
  step: ClaimedStep;
  node: GraphNode;
  signal: AbortSignal;
  leaseMs: number;
}

/** A step handler for a connector: connection, effect ledger, and what an authorisation failure means. */
export function connectorHandler<K extends GraphNode["kind"]>(connector: Connector<K>) {
  return async ({ db, step, node, signal, leaseMs }: HandlerContext): Promise<StepOutcome> => {
    if (node.kind !== connector.kind) throw new Error(`node ${node.id} is ${node.kind}, not ${connector.kind}`);
    const typed = node as Extract<GraphNode, { kind: K }>;
    const found = await connectionFor(db, step, connector, typed);
    if ("outcome" in found) return found.outcome;
    const { connection } = found;
    const owner = effectOwner(step);
    // A test run's step: the provider's part is simulated, and nothing of real traffic's bookkeeping (caps, the
    // breaker, a connection marked for reconnecting) is touched by it.
    const simulation = await simulationFor(db, step);
    const limits = connection && !simulation ? limitsOf(connection.limits) : null;
    if (connection && limits) {
      // The breaker first: an open breaker parks the step without a call (no retry burnt); after the cool-down one
      // attempt becomes the half-open probe.
      const gate = await breakerGate(db, connection, limits, owner);
      if (gate) return gate;
    }
    let called = false;
    let slot: { connectionId: string; beat: NodeJS.Timeout } | null = null;
    try {
      if (connection && limits?.maxConcurrent) {
        // The cap across all workers: no free slot means the step goes back unstarted; it never waits holding a lease.
        const taken = await slotsAcquire(db, step.orgId, connection.id, limits.maxConcurrent, owner, leaseMs);
        if (taken === null) {
          return { kind: "defer", reason: `"${connection.name}" has ${limits.maxConcurrent} calls in flight`, delayMs: 100 + Math.random() * 400 };
        }
        const connectionId = connection.id;
        slot = { connectionId, beat: setInterval(() => slotsExtend(db, connectionId, owner, leaseMs).catch(() => {}), Math.max(100, leaseMs / 3)) };
      }
      const ctx: ConnectorContext<Extract<GraphNode, { kind: K }>> = { db, step, node: typed, signal, connection, templates: templatesOnce(db, step), simulation };
      const performed = await performOnLedger(connector, ctx, leaseMs, (ok) => {
        called = ok;
      });
      const outcome = simulation ? simulation.mark(performed) : performed;
      // Bookkeeping after the provider answered never replaces its answer: the effect must be recorded with it.
      const breaker = connection && limits && called ? await recordForBreaker(db, connection, limits, owner, outcome).catch(() => null) : null;
      if (connection && limits && breaker === "open" && outcome.kind === "retry") {
        // This failure opened the breaker (or a probe failed): the step parks with the others instead of burning
        // its attempts on backoff; the breaker's close resumes it.
        return parkOnBreaker(connection, limits, 0);
      }
      return outcome;
    } finally {
      if (slot) {
        clearInterval(slot.beat);
        await slotsRelease(db, slot.connectionId, owner).catch(() => {});
      }
      // A probe that made no call (deferred, parked, thrown) gives the probe back so another attempt can take it.
      if (connection && !called) await breakerReleaseProbe(db, connection.id, owner).catch(() => {});
    }
  };
}

/**
 * The connection the node names, with its secret decrypted (null for a node that uses none), or the outcome when it
 * cannot be used: missing (fail, for good) or waiting to be reconnected (park).
 */
async function connectionFor<K extends GraphNode["kind"]>(
  db: Db,
  step: ClaimedStep,
  connector: Connector<K>,
  node: Extract<GraphNode, { kind: K }>,
): Promise<{ connection: ConnectorContext["connection"] } | { outcome: StepOutcome }> {
  const name = connector.connection?.name(node) ?? null;
  if (!connector.connection || name === null) return { connection: null };
  const row = await connectionsByName(db, step.orgId, name);
  if (row?.kind !== connector.connection.kind) {
    return { outcome: { kind: "fail", error: { code: "missing_connection", message: `no ${connector.connection.kind} connection named "${name}"`, permanent: true } } };
  }
  if (row.status === "needs_reconnect") return { outcome: parkOnConnection(row, row.statusReason ?? `reconnect "${row.name}"`) };
  return { connection: { ...row, password: row.secret ? decryptSecret(row.secret, row.orgId, row.id) : null } };
}

/** What templates see, read once and only if the connector asks. */
function templatesOnce(db: Db, step: ClaimedStep): () => Promise<TemplateContext> {
  let context: Promise<TemplateContext> | undefined;
  return () => (context ??= templateContext(db, step));
}

/**
 * The connector's call on the effect ledger (the effect key its idempotency key; an uncertain attempt reconciled or
 * re-sent); `onBegin` with the ledger's answer each time the connector asks to call the provider. Credentials the provider refused park the step and
 * mark the connection for reconnecting.
 */
async function performOnLedger<K extends GraphNode["kind"]>(
  connector: Connector<K>,
  ctx: ConnectorContext<Extract<GraphNode, { kind: K }>>,
  leaseMs: number,
  onBegin: (ok: boolean) => void,
): Promise<StepOutcome> {
  const { db, step, signal, connection, simulation } = ctx;
  const reconcile = connector.reconcile;
  const outcome = await runEffect(db, {
    orgId: step.orgId,
    runId: step.runId,
    stepId: step.id,
    key: effectKey(step.runId, step.nodeId, step.iteration),
    kind: connector.kind,
    owner: effectOwner(step),
    leaseMs,
    // A simulated effect touches nobody: trying it again is always safe.
    providerIdempotent: simulation !== null || connector.providerIdempotent(ctx),
    preclaimed: step.effect,
    signal,
    perform: (key, begin) =>
      connector.perform(ctx, key, async () => {
        const ok = await begin();
        onBegin(ok);
        return ok;
      }),
    ...(reconcile && !simulation ? { reconcile: (key: string) => reconcile(ctx, key) } : {}),
  });
  if (outcome.kind === "fail" && outcome.error.authorisation && connection && !simulation) {
    const reason = `"${connection.name}" refused our credentials: reconnect it (${outcome.error.message})`;
    await connectionsMarkNeedsReconnect(db, step.orgId, connection.id, reason);
    return parkOnConnection(connection, reason);
  }
  return outcome;
}

/**
 * The step waits with the connection's paused calls (its breaker is open): the reason in words (providers/connections/
 * paused-calls.ts), with when one call is tried again (`retryAt`: the cool-down's end, from how long the database
 * says it has been open) so the run page can say the time in the viewer's zone.
 */
function parkOnBreaker(connection: Pick<ConnectionRow, "id" | "name">, limits: ConnectionLimits, openForMs: number): StepOutcome {
  const retryAt = new Date(Date.now() + Math.max(0, limits.breaker.coolDownMs - openForMs));
  const paused = pausedCallsOf(connection.name, limits, retryAt);
  const reason = pausedCallsWords({ ...paused, retryAt: null });
  return {
    kind: "park",
    error: {
      code: "breaker_open",
      message: reason,
      reason,
      connectionId: connection.id,
      connection: connection.name,
      retryAt: retryAt.toISOString(),
      failedCalls: paused.failedCalls,
      minCalls: paused.minCalls,
      windowMs: paused.windowMs,
    },
  };
}

/** null: go ahead (closed, or this attempt is the probe); otherwise the step parks until the breaker closes. */
async function breakerGate(db: Db, connection: ConnectionRow, limits: ConnectionLimits, owner: string): Promise<StepOutcome | null> {
  const { coolDownMs } = limits.breaker;
  switch (connection.breakerState) {
    case "closed":
      return null;
    case "half_open":
    case "open":
      if (connection.breakerState === "half_open" && connection.breakerProbe === owner) return null;
      // Open past its cool-down, or a probe that never answered within one: this attempt becomes the probe.
      if ((connection.breakerOpenForMs ?? 0) >= coolDownMs && (await breakerTakeProbe(db, connection.id, owner, coolDownMs))) return null;
      return parkOnBreaker(connection, limits, connection.breakerOpenForMs ?? 0);
  }
}

/**
 * A call's outcome for the breaker: a retryable failure (5xx, timeout, reset, unreachable; not a 429, which the
 * provider's Retry-After already paces) counts against it, a definite answer for it. A probe's success closes it
 * and resumes every step parked on it.
 */
async function recordForBreaker(db: Db, connection: ConnectionRow, limits: ConnectionLimits, owner: string, outcome: StepOutcome): Promise<BreakerState | null> {
  if (outcome.kind === "park" || outcome.kind === "defer") return null;
  if (outcome.kind === "fail" && outcome.error.authorisation) return null;
  const failed = outcome.kind === "retry" && outcome.error.code !== "http_429";
  const before = connection.breakerState;
  const after = await breakerRecord(db, connection.id, !failed, owner, limits.breaker);
  if (before !== "closed" && after === "closed") await stepsResumeParked(db, connection.orgId, { code: "breaker_open", connectionId: connection.id }, "breaker");
  return after;
}

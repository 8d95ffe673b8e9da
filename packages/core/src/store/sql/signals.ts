import type { Db, Tx } from "@holdfast/db";

/**
 * Signals: insert once per (org, identity); correlate a waiting step with its key; consume a signal for a waiting
 * step in one statement that also closes the step's deadline timer. The timer is taken before the step (the order
 * the timer firing uses), so a reply and its deadline never deadlock and exactly one of them settles the step.
 */
export async function signalsInsert(
  tx: Tx,
  s: {
    orgId: string;
    kind: "email_reply" | "approval";
    identity: string;
    correlationKeys: string[];
    payload: unknown;
    /** An email reply's sender: one lower-cased bare address (null: none could be read). */
    sender?: string | null;
    /** Never to be consumed, and why; `runId` is the run whose message it claims to answer (a `signal.refused` event there). */
    unmatched?: { runId: string; reason: string; messageId: string };
  },
): Promise<string | null> {
  const runId = s.unmatched?.runId ?? null;
  const reason = s.unmatched?.reason ?? null;
  const rows = await tx.$queryRaw<{ id: string }[]>`
    WITH ins AS (
      INSERT INTO signals (org_id, kind, identity, correlation_keys, payload, sender, unmatched_reason, run_id)
      VALUES (${s.orgId}, ${s.kind}, ${s.identity}, ${s.correlationKeys}::text[], ${JSON.stringify(s.payload)}::jsonb,
              ${s.sender ?? null}, ${reason}, ${runId})
      ON CONFLICT (org_id, identity) DO NOTHING
      RETURNING id, run_id, unmatched_reason
    ), refused AS (
      INSERT INTO run_events (org_id, run_id, type, worker, data)
      SELECT ${s.orgId}, run_id, 'signal.refused', 'signal',
             jsonb_build_object('signalId', id, 'inReplyTo', ${s.unmatched?.messageId ?? null}::text, 'reason', unmatched_reason)
      FROM ins WHERE run_id IS NOT NULL AND unmatched_reason IS NOT NULL
    )
    SELECT id FROM ins`;
  return rows[0]?.id ?? null;
}

/**
 * The emails runs sent with any of these Message-IDs (a reply's In-Reply-To and References) and whom each went
 * to: the send_email step's output, lower-cased.
 */
export async function signalsFindSentMessages(
  tx: Tx,
  orgId: string,
  messageIds: string[],
): Promise<{ messageId: string; recipient: string | null; runId: string }[]> {
  if (messageIds.length === 0) return [];
  return tx.$queryRaw<{ messageId: string; recipient: string | null; runId: string }[]>`
    SELECT output->>'messageId' AS "messageId", lower(output->>'to') AS recipient, run_id AS "runId" FROM steps
    WHERE org_id = ${orgId} AND kind = 'send_email' AND (output->>'messageId') IS NOT NULL
      AND output->>'messageId' = ANY(${messageIds}::text[]) AND status = 'done'
    ORDER BY settled_at`;
}

/** The waiting step's key: the Message-ID of the latest email its `replyTo` node sent in this run (null if none). */
export async function signalsCorrelate(tx: Tx, orgId: string, runId: string, stepId: string, replyTo: string): Promise<string | null> {
  const rows = await tx.$queryRaw<{ key: string | null }[]>`
    UPDATE steps SET correlation_key = (
      SELECT output->>'messageId' FROM steps
      WHERE org_id = ${orgId} AND run_id = ${runId} AND node_id = ${replyTo} AND status = 'done'
      ORDER BY iteration DESC LIMIT 1)
    WHERE org_id = ${orgId} AND id = ${stepId}
    RETURNING correlation_key AS key`;
  return rows[0]?.key ?? null;
}

/**
 * Why the email a reply wait listens for was not sent (the latest settled step of its `replyTo` node was skipped:
 * suppressed, consent withdrawn), or null when it was sent or has not run. No reply can come to an email never sent.
 */
export async function signalsAwaitedEmailSkipped(tx: Tx, orgId: string, runId: string, replyTo: string): Promise<string | null> {
  const rows = await tx.$queryRaw<{ reason: string | null }[]>`
    SELECT CASE WHEN (output->>'skipped')::boolean THEN coalesce(output->>'reason', 'not sent') END AS reason FROM steps
    WHERE org_id = ${orgId} AND run_id = ${runId} AND node_id = ${replyTo} AND status = 'done'
    ORDER BY iteration DESC LIMIT 1`;
  return rows[0]?.reason ?? null;
}

/** Waiting steps listening for any of these keys (an inbound reply's In-Reply-To and References). */
export async function signalsWaitingFor(tx: Tx, orgId: string, keys: string[]): Promise<{ id: string; runId: string }[]> {
  if (keys.length === 0) return [];
  return tx.$queryRaw<{ id: string; runId: string }[]>`
    SELECT id, run_id AS "runId" FROM steps
    WHERE org_id = ${orgId} AND status = 'waiting' AND correlation_key = ANY(${keys}::text[])
    ORDER BY created_at`;
}

/**
 * Consumes the oldest unconsumed signal for a waiting step: the deadline timer closed (fired_by 'signal'), the step
 * settled `done` with `{outcome: "reply", reply}` (over what the step held, an approval's stage), the signal marked consumed, a run.wake and the timeline rows, in
 * one statement. Nothing happens if the timer already fired (the deadline won) or the step is no longer waiting.
 * Never consumed: a signal with an unmatched_reason, and an email reply whose sender is not the recipient of the
 * email the step waits on (checked here too, not only when the reply came in: the run may reach its wait later).
 */
export async function signalsConsumeWaiting(tx: Tx, orgId: string, stepId: string, actor: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ n: number }[]>`
    WITH st AS (
      SELECT id, run_id, node_id, correlation_key FROM steps
      WHERE org_id = ${orgId} AND id = ${stepId} AND status = 'waiting' AND correlation_key IS NOT NULL
    ), sig AS (
      -- An email reply counts only from the recipient of the message the step waits on (people/signals/email.ts).
      SELECT s.id, s.payload FROM signals s, st
      WHERE s.org_id = ${orgId} AND s.consumed_at IS NULL AND s.unmatched_reason IS NULL
        AND st.correlation_key = ANY(s.correlation_keys)
        AND (s.kind <> 'email_reply' OR s.sender = (
          SELECT lower(m.output->>'to') FROM steps m
          WHERE m.org_id = ${orgId} AND m.run_id = st.run_id AND m.kind = 'send_email' AND m.status = 'done'
            AND m.output->>'messageId' = st.correlation_key
          ORDER BY m.iteration DESC LIMIT 1))
      ORDER BY s.received_at LIMIT 1
      FOR UPDATE OF s SKIP LOCKED
    ), timer AS (
      UPDATE timers t SET fired_at = now(), fired_by = 'signal', lateness_ms = 0, updated_at = now()
      FROM sig WHERE t.org_id = ${orgId} AND t.step_id = ${stepId} AND t.fired_at IS NULL
      RETURNING t.id
    ), settled AS (
      UPDATE steps s SET status = 'done', settled_at = now(), updated_at = now(),
                         output = COALESCE(s.output, '{}'::jsonb)
                                  || jsonb_build_object('outcome', 'reply', 'signalId', sig.id, 'reply', sig.payload)
      FROM sig, timer WHERE s.id = ${stepId} AND s.status = 'waiting'
      RETURNING s.id, s.org_id, s.run_id, s.node_id, sig.id AS signal_id
    ), used AS (
      UPDATE signals g SET consumed_at = now(), run_id = settled.run_id, step_id = settled.id
      FROM settled WHERE g.id = settled.signal_id
      RETURNING g.id
    ), wake AS (
      INSERT INTO outbox (org_id, run_id, topic, payload)
      SELECT org_id, run_id, 'run.wake', jsonb_build_object('orgId', org_id, 'runId', run_id, 'reason', 'signal') FROM settled
    ), event AS (
      INSERT INTO run_events (org_id, run_id, step_id, node_id, type, worker, data)
      SELECT org_id, run_id, id, node_id, 'signal.consumed', ${actor}, jsonb_build_object('signalId', signal_id) FROM settled
    )
    SELECT count(*)::int AS n FROM used`;
  return (rows[0]?.n ?? 0) > 0;
}

/**
 * send_email steps by id, in any organisation the caller's scope allows (a routing address names its step only):
 * their organisation, run and the Message-ID they sent. Used only to check a routing token's MAC and then match on it.
 */
export function signalsSentMessagesBySteps(
  tx: Tx,
  stepIds: string[],
): Promise<{ stepId: string; orgId: string; orgSlug: string; runId: string; messageId: string | null }[]> {
  if (stepIds.length === 0) return Promise.resolve([]);
  return tx.$queryRaw`
    SELECT s.id AS "stepId", s.org_id AS "orgId", o.slug AS "orgSlug", s.run_id AS "runId", s.output->>'messageId' AS "messageId"
    FROM steps s JOIN organisations o ON o.id = s.org_id
    WHERE s.id = ANY(${stepIds}::text[]) AND s.kind = 'send_email'`;
}

/**
 * Erasure: the replies of an erased contact lose their words. Signals of the contact's runs (consumed replies and
 * approval decisions, refused replies that claimed to answer them) and any signal sent by the address or naming it
 * (a reply that matched no run is kept with no run) get `{erased: true}` as payload; her sender becomes the hash, so
 * the identity and correlation keys still de-duplicate a redelivery without anything readable. Returns how many.
 */
export function signalsErase(tx: Tx, orgId: string, runIds: string[], email: string, hash: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE signals SET payload = '{"erased": true}'::jsonb,
                       sender = CASE WHEN sender = lower(${email}) THEN ${hash} ELSE sender END
    WHERE org_id = ${orgId}
      AND (run_id = ANY(${runIds}::text[]) OR sender = lower(${email})
           OR position(lower(${email}) IN lower(payload::text)) > 0)`;
}

/** A signal as the run page shows it. */
export interface SignalView {
  id: string;
  kind: string;
  identity: string;
  receivedAt: Date;
  consumedAt: Date | null;
  stepId: string | null;
  payload: unknown;
  /** Why this signal can never move the run (e.g. a reply from someone other than the recipient). */
  unmatchedReason: string | null;
}

export function signalsViewOfRun(db: Db | Tx, orgId: string, runId: string): Promise<SignalView[]> {
  return db.$queryRaw<SignalView[]>`
    SELECT id, kind, identity, received_at AS "receivedAt", consumed_at AS "consumedAt", step_id AS "stepId", payload,
           unmatched_reason AS "unmatchedReason"
    FROM signals WHERE org_id = ${orgId} AND run_id = ${runId} ORDER BY received_at`;
}

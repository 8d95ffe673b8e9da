-- A settle batch's walked items settled as sets: the items of p_items (holdfast_step_settle_batch's) that ended their
-- step, done or failed, with the walk their worker made ('rows' and 'runSeq'), each the only item of its run in the
-- batch, are written by a few statements for all of them, where holdfast_step_settle (step_settle.sql) makes about
-- eight for each. Every row is the one holdfast_step_settle would write for that item alone, in the same order on its
-- run's timeline: the run moved on by its walk (seq + 1, and its end), the step's outcome fenced by its attempt, its
-- effect's answer fenced by the effect's owner, the settle's timeline row, the walk's rows (holdfast_rows_insert's:
-- steps, timeline, outbox, journey count changes, each naming the item's run and organisation), and the effect key of
-- a step the walk claimed for the worker. The journey count changes that name no run (the steps', which the count
-- triggers make one a row, 20261215100000_count_by_statement, and the edges' that leave no split) are made by the
-- statement that writes the steps, summed while the transaction collects (holdfast_count_tally_start).
-- It decides nothing for an item it cannot settle exactly so: when any of them has its run not moved on (another seq,
-- not running, being cancelled, held), its step's attempt stale, its effect taken over (or named by another item), its
-- walk naming another run, or its claimed step's effect key already taken, it raises HF007 and the caller (in a
-- subtransaction) settles every item one by one instead, which answers each case. Items of a run with another item in
-- the batch are left to the caller (one by one, in the batch's order), so each run's timeline keeps the items' order;
-- so is every item after the batch's first one the set does not take, so the set's runs (the items come sorted by
-- run) are locked before the others'. The set's runs are locked first (the engine's and cancel's order), by one
-- UPDATE, in the order its plan visits them: two batches that share two of them may lock them in other orders, which
-- PostgreSQL's deadlock check ends by failing one batch, whose caller then settles its items one by one
-- (store/sql/steps-settle.ts).
-- Returns {"<ordinal in p_items>": the item's answer, as holdfast_step_settle's} for the items it settled ({} for
-- none). Called by holdfast_step_settle_batch only.
-- Planned without sequential scans, hash joins or merge joins: every row it reads is found by its key, a probe an
-- item, at any table size. A plan the connection made while steps and effects were small (a new deployment's first
-- seconds, or statistics from then) joined the items to a scan of the whole table, and the connection kept it while the
-- tables grew: every batch read every step (a quick race's lane worker spent 15-30% more PostgreSQL CPU a step).
-- History: new on 2026-12-06 (issue 47: a chained settle's statements, each preparing its table's checks, index
-- predicates and triggers again, were most of a step's PostgreSQL CPU).
CREATE OR REPLACE FUNCTION holdfast_step_settle_set(p_items jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET enable_seqscan = off
 SET enable_hashjoin = off
 SET enable_mergejoin = off
AS $function$
DECLARE
  wanted integer;
  got integer;
  ran jsonb;
  settled integer;
  effects_wanted integer;
  effects_got integer;
  steps_wanted integer;
  steps_got integer;
  events_wanted integer;
  events_got integer;
  outbox_wanted integer;
  outbox_got integer;
  claims_wanted integer;
  claims_got integer;
  effects_shared integer;
  answers jsonb;
  summed boolean;
  -- The setting as the caller left it, put back after statement 2.
  prior text := current_setting('holdfast.count_by_statement', true);
BEGIN
  -- 1. Each item's run: seq + 1 and, when its walk ended it, its end. The update is the run's lock.
  WITH a AS (
    SELECT i.n, i.v, s.run_id, s.org_id,
           count(*) OVER (PARTITION BY s.run_id) = 1
             AND i.v->>'status' IN ('done', 'failed') AND jsonb_typeof(i.v->'rows') = 'object' AND i.v->>'runSeq' IS NOT NULL
             AND (i.v->'effect' IS NULL OR jsonb_typeof(i.v->'effect') = 'object') AS walked
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(v, n)
    JOIN steps s ON s.id = i.v->>'stepId'
  ), f AS (
    -- The walked items before the batch's first other one: the caller sorts the items by run, so the set's runs are
    -- locked before those the items after it lock one by one, and two batches lock runs in one order.
    SELECT a.n, a.v, a.run_id, a.org_id FROM a
    WHERE a.walked AND a.n < COALESCE((SELECT min(b.n) FROM a b WHERE NOT b.walked), 9223372036854775807)
  ), u AS (
    UPDATE runs r SET
      seq = r.seq + 1,
      updated_at = CASE WHEN f.v->'rows'->'finish'->>'status' IS NULL THEN r.updated_at ELSE now() END,
      status = COALESCE(f.v->'rows'->'finish'->>'status', r.status),
      error = CASE WHEN jsonb_typeof(f.v->'rows'->'finish') = 'object' THEN f.v->'rows'->'finish'->'error' ELSE r.error END,
      finished_at = CASE WHEN f.v->'rows'->'finish'->>'status' IS NULL THEN r.finished_at ELSE now() END
    FROM f
    -- Running, said by its finish (runs_finished_check: no finished_at exactly while it runs), for the reason the steps
    -- UPDATE below says by owner: no index holds it, so each run is found by its key.
    WHERE r.id = f.run_id AND r.org_id = f.org_id AND r.seq = (f.v->>'runSeq')::bigint AND r.finished_at IS NULL
      AND r.cancel_requested_at IS NULL AND r.held_at IS NULL
    RETURNING f.n, r.id, r.org_id, r.seq, r.version_id, r.test, r.max_steps, COALESCE(r.expires_at <= now(), false) AS expired,
              CASE WHEN jsonb_typeof(f.v->'rows'->'claim') = 'object' THEN r.input END AS input
  )
  SELECT (SELECT count(*) FROM f), count(*), COALESCE(jsonb_object_agg(u.n::text, jsonb_build_object(
           'runId', u.id, 'orgId', u.org_id, 'seq', u.seq::text, 'versionId', u.version_id, 'test', u.test,
           'maxSteps', u.max_steps, 'expired', u.expired, 'input', u.input)), '{}'::jsonb)
  INTO wanted, got, ran FROM u;
  IF wanted = 0 THEN
    RETURN '{}'::jsonb;
  END IF;
  IF got <> wanted THEN
    RAISE EXCEPTION 'a run of the batch was not moved on by its walk' USING ERRCODE = 'HF007';
  END IF;

  -- 2. The steps' outcomes, their effects' answers, the settles' timeline rows and the walks' rows, in one statement.
  -- Its sub-statements run in no set order: each table is written by one of them, and the timeline's rows by one
  -- INSERT in each run's order (the settle's row, then its walk's). The journey count changes that name no run are
  -- made by the statement too (`moves`): the step count triggers stand aside while holdfast.count_by_statement is on
  -- (20261215100000_count_by_statement).
  summed := COALESCE(current_setting('holdfast.count_tally', true), '') <> '';
  PERFORM set_config('holdfast.count_by_statement', 'on', true);
  WITH f AS (
    SELECT i.n, i.v FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(v, n) WHERE ran ? (i.n::text)
  ), st AS (
    UPDATE steps s SET
      status = f.v->>'status',
      output = CASE WHEN f.v->>'status' = 'done' THEN f.v->'output' ELSE s.output END,
      error = CASE WHEN f.v->>'status' = 'done' THEN NULL ELSE f.v->'error' END,
      settled_at = now(),
      advanced_at = now(),
      deferrals = s.deferrals + CASE WHEN f.v->>'event' = 'step.deferred' THEN 1 ELSE 0 END,
      owner = NULL, lease_until = NULL, updated_at = now()
    FROM f
    -- Running, said by its owner (steps_lease_check: a step has an owner exactly while it runs): a condition on status
    -- let the planner read every running step through the open steps' index and match each to the items, at every
    -- batch; by owner, which no index holds, each step is found by its key.
    WHERE s.id = f.v->>'stepId' AND s.attempt = (f.v->>'token')::int AND s.owner IS NOT NULL
      -- The run step 1 moved on (the step's run, as its org; a walk's rows are kept to them below).
      AND s.run_id = ran->(f.n::text)->>'runId'
    RETURNING f.n, f.v, s.org_id, s.run_id, s.node_id, s.attempt, s.lane
  ), eff AS (
    UPDATE effects e SET status = 'settled', result = st.v->'effect'->'result',
                         error = CASE WHEN jsonb_typeof(st.v->'effect'->'error') = 'null' THEN NULL ELSE st.v->'effect'->'error' END,
                         owner = NULL, lease_until = NULL, settled_at = now(), updated_at = now()
    FROM st
    WHERE jsonb_typeof(st.v->'effect') = 'object' AND (st.v->'effect'->>'release')::boolean IS NOT TRUE
      AND e.org_id = st.v->'effect'->>'orgId' AND e.key = st.v->'effect'->>'key' AND e.owner = st.v->'effect'->>'owner'
      AND e.status = 'in_flight'
    RETURNING 1
  ), released AS (
    DELETE FROM effects e USING st
    WHERE (st.v->'effect'->>'release')::boolean IS TRUE
      AND e.org_id = st.v->'effect'->>'orgId' AND e.key = st.v->'effect'->>'key' AND e.owner = st.v->'effect'->>'owner'
      AND e.status = 'in_flight' AND e.attempts = 1
    RETURNING 1
  ), new_steps AS (
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, owner, attempt, lease_until)
    SELECT x.id, x."orgId", x."runId", x."nodeId", x.iteration, x.kind, x.lane, x."maxAttempts", x.status, x.owner,
           COALESCE(x.attempt, 0), now() + make_interval(secs => x."leaseMs" / 1000)
    FROM st CROSS JOIN LATERAL jsonb_to_recordset(COALESCE(st.v->'rows'->'steps', '[]'::jsonb))
      AS x(id text, "orgId" text, "runId" text, "nodeId" text, iteration int, kind text, lane text, "maxAttempts" int,
           status text, owner text, attempt int, "leaseMs" float8)
    WHERE x."orgId" = st.org_id AND x."runId" = st.run_id
    RETURNING 1
  ), events AS (
    INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
    SELECT a.org_id, a.run_id, a.step_id, a.node_id, a.attempt, a.type, a.lane, a.worker, a.data
    FROM (
      -- The settle's own row; data.chained names the node and iteration of the step its walk claimed for this worker (step_settle.sql).
      SELECT st.n, 0::bigint AS k, st.org_id, st.run_id, st.v->>'stepId' AS step_id, st.node_id, st.attempt,
             st.v->>'event' AS type, st.lane, st.v->>'worker' AS worker,
             CASE WHEN jsonb_typeof(st.v->'rows'->'claim') = 'object'
                       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(st.v->'rows'->'events', '[]'::jsonb)) e
                                       WHERE e->>'type' = 'step.claimed' AND e->>'stepId' = st.v->'rows'->'claim'->>'stepId')
                  THEN COALESCE(st.v->'eventData', '{}'::jsonb)
                       || jsonb_build_object('chained', jsonb_build_object('nodeId', st.v->'rows'->'claim'->'nodeId',
                                                                          'iteration', st.v->'rows'->'claim'->'iteration'))
                  ELSE st.v->'eventData' END AS data
      FROM st
      UNION ALL
      SELECT st.n, e.k, e."orgId", e."runId", e."stepId", e."nodeId", e.attempt, e.type, e.lane, e.worker, e.data
      FROM st CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(COALESCE(st.v->'rows'->'events', '[]'::jsonb))
             AS ("orgId" text, "runId" text, "stepId" text, "nodeId" text, attempt int, type text, lane text, worker text, data jsonb))
           WITH ORDINALITY AS e("orgId", "runId", "stepId", "nodeId", attempt, type, lane, worker, data, k)
      WHERE e."orgId" = st.org_id AND e."runId" = st.run_id
    ) a
    ORDER BY a.n, a.k
    RETURNING 1
  ), boxed AS (
    INSERT INTO outbox (org_id, run_id, topic, payload, available_at)
    SELECT o."orgId", o."runId", o.topic, o.payload, now() + make_interval(secs => COALESCE(o."delayMs", 0) / 1000)
    FROM st CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(COALESCE(st.v->'rows'->'outbox', '[]'::jsonb))
           AS ("orgId" text, "runId" text, topic text, payload jsonb, "delayMs" float8))
         WITH ORDINALITY AS o("orgId", "runId", topic, payload, "delayMs", k)
    WHERE o."orgId" = st.org_id AND o."runId" = st.run_id
      AND COALESCE(o.payload->>'orgId', st.org_id) = st.org_id AND COALESCE(o.payload->>'runId', st.run_id) = st.run_id
      AND (o.payload->>'stepId' IS NULL
           OR o.payload->>'stepId' IN (SELECT s->>'id' FROM jsonb_array_elements(COALESCE(st.v->'rows'->'steps', '[]'::jsonb)) s))
    ORDER BY st.n, o.k
    RETURNING 1
  ), edges AS (
    -- An edge that leaves a split keeps its run (holdfast_rows_insert); the others are summed below.
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
    SELECT st.org_id, ran->(st.n::text)->>'versionId', st.run_id, x."nodeId", x.bucket
    FROM st CROSS JOIN LATERAL jsonb_to_recordset(COALESCE(st.v->'rows'->'edges', '[]'::jsonb)) AS x("nodeId" text, bucket text, run boolean)
    WHERE x.run IS NOT FALSE AND ran->(st.n::text)->>'orgId' = st.org_id AND NOT (ran->(st.n::text)->>'test')::boolean
    RETURNING 1
  ), moves AS MATERIALIZED (
    -- The journey count changes that name no run (test runs count nothing): the steps written above, each as
    -- holdfast_count_step makes it for a row (a settled step leaves "now", it was running, for its outcome's bucket;
    -- each step the walk inserted enters its status's), and the edges the walks took that leave no split (the ones
    -- holdfast_rows_insert gives holdfast_count_change). The walk's steps are counted as given: a statement that did
    -- not insert every one raises HF007 below, and none of this is kept.
    SELECT st.org_id, ran->(st.n::text)->>'versionId' AS version_id, m.node_id, m.from_bucket, m.to_bucket
    FROM st CROSS JOIN LATERAL (
      SELECT st.node_id, 'now'::text AS from_bucket, holdfast_count_bucket(st.v->>'status') AS to_bucket
      UNION ALL
      SELECT x."nodeId", NULL,
             CASE WHEN x.status = 'cancelled' AND EXISTS (SELECT 1 FROM runs r WHERE r.id = st.run_id AND r.goal_met IS NOT NULL)
                  THEN 'converted' ELSE holdfast_count_bucket(x.status) END
      FROM jsonb_to_recordset(COALESCE(st.v->'rows'->'steps', '[]'::jsonb)) AS x("orgId" text, "runId" text, "nodeId" text, status text)
      WHERE x."orgId" = st.org_id AND x."runId" = st.run_id
      UNION ALL
      SELECT x."nodeId", NULL, x.bucket
      FROM jsonb_to_recordset(COALESCE(st.v->'rows'->'edges', '[]'::jsonb)) AS x("nodeId" text, bucket text, run boolean)
      WHERE x.run IS FALSE
    ) m
    WHERE NOT (ran->(st.n::text)->>'test')::boolean
  ), moves_summed AS (
    -- Summed while the transaction collects (holdfast_count_tally_start), else a count_changes row each, as
    -- holdfast_count_change writes them.
    INSERT INTO count_tallies (org_id, version_id, node_id, from_bucket, to_bucket, n)
    SELECT m.org_id, m.version_id, m.node_id, m.from_bucket, m.to_bucket, count(*) FROM moves m WHERE summed
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ), moves_unsummed AS (
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT m.org_id, m.version_id, NULL, m.node_id, m.from_bucket, m.to_bucket FROM moves m WHERE NOT summed
  ), claims AS (
    -- The effect key of a step the walk claimed for this worker (holdfast_effect_claim's insert, attempt 1).
    INSERT INTO effects (org_id, run_id, step_id, key, kind, status, owner, lease_until)
    SELECT st.org_id, st.run_id, c.c->>'stepId', st.run_id || '/' || (c.c->>'nodeId') || '/' || (c.c->>'iteration')::int,
           c.c->>'kind', 'in_flight', (c.c->>'stepId') || ':1', now() + make_interval(secs => (c.c->>'leaseMs')::float8 / 1000)
    FROM st CROSS JOIN LATERAL (SELECT st.v->'rows'->'claim' AS c) c
    WHERE jsonb_typeof(c.c) = 'object' AND (c.c->>'effect')::boolean
      AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.org_id = st.org_id
                        AND e.key = st.run_id || '/' || (c.c->>'nodeId') || '/' || (c.c->>'iteration')::int)
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM st),
         (SELECT count(*) FROM f WHERE jsonb_typeof(f.v->'effect') = 'object' AND (f.v->'effect'->>'release')::boolean IS NOT TRUE),
         (SELECT count(*) FROM eff),
         (SELECT COALESCE(sum(jsonb_array_length(COALESCE(f.v->'rows'->'steps', '[]'::jsonb))), 0) FROM f),
         (SELECT count(*) FROM new_steps),
         (SELECT count(*) + COALESCE(sum(jsonb_array_length(COALESCE(f.v->'rows'->'events', '[]'::jsonb))), 0) FROM f),
         (SELECT count(*) FROM events),
         (SELECT COALESCE(sum(jsonb_array_length(COALESCE(f.v->'rows'->'outbox', '[]'::jsonb))), 0) FROM f),
         (SELECT count(*) FROM boxed),
         (SELECT count(*) FROM f WHERE jsonb_typeof(f.v->'rows'->'claim') = 'object' AND (f.v->'rows'->'claim'->>'effect')::boolean),
         (SELECT count(*) FROM claims),
         -- An effect another item of the batch names too: alone, one of them is refused (HF002), in the batch's order.
         (SELECT count(*) FROM f
          JOIN jsonb_array_elements(p_items) WITH ORDINALITY AS o(v, n)
            ON o.n <> f.n AND jsonb_typeof(o.v->'effect') = 'object'
           AND o.v->'effect'->>'orgId' = f.v->'effect'->>'orgId' AND o.v->'effect'->>'key' = f.v->'effect'->>'key'
          WHERE jsonb_typeof(f.v->'effect') = 'object')
  INTO settled, effects_wanted, effects_got, steps_wanted, steps_got, events_wanted, events_got, outbox_wanted, outbox_got,
       claims_wanted, claims_got, effects_shared;
  PERFORM set_config('holdfast.count_by_statement', COALESCE(prior, ''), true);
  IF settled <> wanted OR effects_got <> effects_wanted OR effects_shared <> 0 OR steps_got <> steps_wanted
     OR events_got <> events_wanted OR outbox_got <> outbox_wanted OR claims_got <> claims_wanted THEN
    RAISE EXCEPTION 'an item of the batch cannot be settled with the others' USING ERRCODE = 'HF007';
  END IF;
  -- A step the walk claims must be one it inserted (holdfast_rows_insert's check).
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(v, n)
             WHERE ran ? (i.n::text) AND jsonb_typeof(i.v->'rows'->'claim') = 'object'
               AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(i.v->'rows'->'steps', '[]'::jsonb)) s
                               WHERE s->>'id' = i.v->'rows'->'claim'->>'stepId')) THEN
    RAISE EXCEPTION 'a claimed step is not one its walk inserted' USING ERRCODE = 'HF007';
  END IF;

  -- 3. The answers; a claimed step's run as its inline walk will see it (read after every write above).
  SELECT jsonb_object_agg(i.n::text, jsonb_build_object('changed', true, 'advanced', true, 'claimed',
           CASE WHEN jsonb_typeof(i.v->'rows'->'claim') = 'object' THEN jsonb_build_object(
             'versionId', r->'versionId', 'maxSteps', r->'maxSteps', 'expired', r->'expired', 'input', r->'input',
             'runSeq', r->'seq', 'test', r->'test',
             'effect', CASE WHEN (i.v->'rows'->'claim'->>'effect')::boolean THEN '{"claimed": true}'::jsonb END,
             'runSteps', CASE WHEN (i.v->'rows'->'claim'->>'runStepsKnown')::boolean IS TRUE THEN NULL
                              ELSE holdfast_run_steps(r->>'runId') END) END))
  INTO answers
  FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(v, n)
  CROSS JOIN LATERAL (SELECT ran->(i.n::text) AS r) x
  WHERE ran ? (i.n::text);
  RETURN answers;
END;
$function$;

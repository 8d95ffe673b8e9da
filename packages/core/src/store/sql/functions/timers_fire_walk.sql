-- Fires a batch of timers and moves their runs on, as a set, in one statement: the 09:00 spike's firing. p_ids are the
-- timers to fire, each only if it is due by the database clock and unfired (the fence: fired_at IS NULL), and, when
-- p_wakes is given, still at that wake number (the engine's delayed jobs; the due sweep passes NULL for timers it
-- picked and locked in this transaction). Each fired timer settles its wait step and gets its `timer.fired` timeline
-- row, as the firing statement in store/sql/timers.ts writes them.
-- p_plans holds the walk's answer for "this wait just fired" where the graph alone decides it, keyed
-- '<version id> <wait node id>': {"edges": [{"nodeId", "bucket"}], "next": {"nodeId","kind","lane","maxAttempts"} | null,
-- "end": <end node id> | null}, made in TypeScript by the walk itself (decide/walk/plan.ts planAfterTimer, turned into
-- this form by run/engine/timer-plans.ts). A fired timer's run takes its plan here when the run is one the plan is true
-- for: locked by this statement without waiting (SKIP LOCKED), running, not being cancelled, not held by its paused
-- automation, not past its age budget, not a test run, under its step budget (the walk's count: every step of the run),
-- its wait step still waiting, and no other step open or settled and not walked on. Then, in this statement, the wait
-- step is marked walked on, the next step is inserted ready (iteration: one more than the node's last) with its
-- `step.scheduled` row and its `step.ready` wake-up, or the run completes with its `run.completed` row; the edges
-- taken are counted (count_changes, or count_tallies; a plan's edges never leave a split, so they name no run) and the
-- run's seq moves on; the same rows the applier writes
-- (run/apply/apply.ts applyPlans; packages/core/test/timers-fire-walk.test.ts compares them). The plan is applied only
-- where this statement settled the wait (a wait another writer settled after the statement's snapshot is left alone),
-- and, for a next step, only where the step went in: one already at its (run, node, iteration) is kept, as the applier
-- keeps it, the wait is left marked walked on, and that run's other rows are not written. Every other fired timer
-- comes back with walked NULL: the caller walks that run in the same transaction (run/engine/advance.ts advanceMany),
-- which gives a run another transaction holds a run.wake.
-- Returns one row per fired timer: its id, wake, organisation, run, step, lateness, the run's version and the wait's
-- node, and walked: 'completed' or 'running' when the plan was applied here, NULL otherwise.
-- The steps' journey count changes (the waits settled, the next steps inserted) and the ends of the runs it completes
-- are made by the statement, where the count triggers make one a row (the step triggers stand aside while
-- holdfast.count_by_statement is on: 20261215100000_count_by_statement; the run trigger while
-- holdfast.count_run_end_by_statement is: 20261216100000_count_run_end_by_statement). With p_tally they are written
-- summed, one count_tallies row per version, node and move (count_tally_start.sql), and so are the edges that name no
-- run.
-- Called by store/sql/timers-fire-walk.ts (the engine's batches, run/engine/fire-timers.ts, and the due sweep).
-- Planned without sequential or bitmap scans: every row it reads is found by its key. With 20,000 steps and true
-- statistics the planner judged a scan of all of them, joined by hash, cheaper than a batch's 500 probes, and read
-- steps whole twice a batch; without sequential scans it read every waiting step through the open steps' index instead
-- (a bitmap scan, 16,000 rows to settle 500 waits: a fifth of the statement's time in the spike bench at 20,000).
-- History: p_tally since 20261213100000_count_tallies (no release had the four-argument form, which is dropped here;
-- NULL is taken as false).
DROP FUNCTION IF EXISTS holdfast_timers_fire_walk(text[], integer[], text, jsonb);
CREATE OR REPLACE FUNCTION holdfast_timers_fire_walk(p_ids text[], p_wakes integer[], p_by text, p_plans jsonb, p_tally boolean)
 RETURNS TABLE("timerId" text, wake integer, "orgId" text, "runId" text, "stepId" text, "latenessMs" double precision, "versionId" text, "nodeId" text, walked text)
 LANGUAGE plpgsql
 SET enable_seqscan = off
 SET enable_bitmapscan = off
AS $function$
#variable_conflict use_column
DECLARE
  -- The setting as the caller left it, put back after the statement.
  prior text := current_setting('holdfast.count_by_statement', true);
BEGIN
  p_tally := p_tally IS TRUE;
  IF p_tally THEN
    PERFORM holdfast_count_tally_start();
  END IF;
  PERFORM set_config('holdfast.count_by_statement', 'on', true), set_config('holdfast.count_unlocked', '[]', true),
          set_config('holdfast.count_run_end_by_statement', 'on', true);
  -- PL/pgSQL, not SQL: its plan is kept for the session's next batch rather than made again at every call.
  RETURN QUERY
  -- Every CTE below reads the one before it row by row, or a table by its keys: no CTE is joined to another (their
  -- row counts are unknown to the planner, which then nests loops over them: a cost that grows with the square of the
  -- batch, measured in the spike as twice the due sweep's PostgreSQL CPU a timer of the walk's path).
  WITH fired AS MATERIALIZED (
    UPDATE timers t SET fired_at = now(), fired_by = p_by, updated_at = now(),
                        lateness_ms = GREATEST(0, EXTRACT(EPOCH FROM now() - t.due_at) * 1000)
    WHERE t.id = ANY(p_ids) AND t.fired_at IS NULL AND t.due_at <= now()
      AND (p_wakes IS NULL OR (t.id, t.wake) IN (SELECT * FROM unnest(p_ids, p_wakes)))
    RETURNING t.id, t.wake, t.org_id, t.run_id, t.step_id, t.due_at, t.lateness_ms
  ), facts AS MATERIALIZED (
    SELECT f.*, s.node_id, s.kind AS step_kind, s.status = 'waiting' AS was_waiting, r.version_id, r.test, r.plan,
           r.applies AND s.status = 'waiting' AND jsonb_typeof(r.plan) = 'object'
             AND (jsonb_typeof(r.plan -> 'next') = 'object' OR jsonb_typeof(r.plan -> 'end') = 'string')
             -- No other step open or settled and not walked on, and under the step budget: one read of the run's steps.
             AND (SELECT count(*) FILTER (WHERE o.id <> f.step_id AND (o.status IN ('ready', 'running', 'waiting', 'parked')
                                                                     OR (o.status IN ('done', 'failed') AND o.advanced_at IS NULL))) = 0
                         AND (r.max_steps IS NULL OR count(*) < r.max_steps)
                  FROM steps o WHERE o.run_id = f.run_id) AS applies
    FROM fired f
    LEFT JOIN steps s ON s.id = f.step_id
    -- The run, locked here without waiting: one another transaction holds is walked by the caller's path (a run.wake).
    LEFT JOIN LATERAL (
      SELECT r.version_id, r.test, p_plans -> (r.version_id || ' ' || s.node_id) AS plan, r.max_steps,
             r.org_id = f.org_id AND r.status = 'running' AND r.cancel_requested_at IS NULL AND r.held_at IS NULL
               AND NOT COALESCE(r.expires_at <= now(), false) AND NOT r.test AS applies
      FROM runs r WHERE r.id = f.run_id FOR UPDATE SKIP LOCKED
    ) r ON true
  ), settled AS MATERIALIZED (
    -- The wait settles only if it is still waiting at its newest version (the UPDATE re-reads the row it waits for):
    -- `facts` read it in the statement's snapshot, taken before the run was locked, so another writer may have settled
    -- it since. Only the waits settled here go on to `plain`, and only at the node their plan was looked up by: a run
    -- the lock found moved on by a writer that committed after the snapshot (a migration: another version, the wait
    -- renamed) has its plan keyed by its new version and the wait's old node, and is left to the caller's walk.
    UPDATE steps s SET status = 'done', settled_at = now(), updated_at = now(),
                       advanced_at = CASE WHEN x.applies AND s.node_id = x.node_id THEN now() ELSE s.advanced_at END,
                       output = COALESCE(s.output, '{}'::jsonb)
                                || jsonb_build_object('dueAt', x.due_at, 'firedAt', now(), 'latenessMs', x.lateness_ms)
                                || CASE WHEN s.kind = 'wait_for_reply' THEN '{"outcome": "timeout"}'::jsonb ELSE '{}'::jsonb END
    FROM facts x WHERE s.id = x.step_id AND s.status = 'waiting'
    -- The wait's node as the update found it (a migration may have renamed it after the statement's snapshot).
    RETURNING x.*, s.node_id AS settled_node
  ), plain AS MATERIALIZED (
    SELECT x.*, x.plan -> 'next' ->> 'nodeId' AS next_node,
           CASE WHEN jsonb_typeof(x.plan -> 'next') = 'object' THEN holdfast_ordered_id('stp_') END AS next_id,
           CASE WHEN jsonb_typeof(x.plan -> 'next') = 'object' THEN
             (SELECT COALESCE(max(i.iteration), 0) + 1 FROM steps i WHERE i.run_id = x.run_id AND i.node_id = x.plan -> 'next' ->> 'nodeId')
           END AS next_iteration
    FROM settled x WHERE x.applies AND x.settled_node = x.node_id
  ), next_steps AS MATERIALIZED (
    -- A step already at its (run, node, iteration) (the snapshot's count of iterations is as old as the snapshot) is
    -- not written over, and the batch goes on: that run's plan is dropped below and the caller walks it.
    INSERT INTO steps (id, org_id, run_id, node_id, iteration, kind, lane, max_attempts, status, attempt)
    SELECT p.next_id, p.org_id, p.run_id, p.next_node, p.next_iteration, p.plan -> 'next' ->> 'kind',
           p.plan -> 'next' ->> 'lane', (p.plan -> 'next' ->> 'maxAttempts')::int, 'ready', 0
    FROM plain p WHERE p.next_id IS NOT NULL
    ON CONFLICT (run_id, node_id, iteration) DO NOTHING
    RETURNING id
  ), applied AS MATERIALIZED (
    -- The plans applied here: the runs that end, and the runs whose next step went in (a hashed lookup, not a join).
    SELECT p.* FROM plain p WHERE p.next_id IS NULL OR p.next_id IN (SELECT n.id FROM next_steps n)
  ), moved AS (
    -- A run that goes on: seq only (a HOT update, runsTouch); a run that ends: as runsFinish ends it.
    UPDATE runs r SET seq = r.seq + 1,
                      status = CASE WHEN p.next_id IS NULL THEN 'completed' ELSE r.status END,
                      error = CASE WHEN p.next_id IS NULL THEN NULL ELSE r.error END,
                      finished_at = CASE WHEN p.next_id IS NULL THEN now() ELSE r.finished_at END,
                      updated_at = CASE WHEN p.next_id IS NULL THEN now() ELSE r.updated_at END,
                      held_at = CASE WHEN p.next_id IS NULL THEN NULL ELSE r.held_at END
    FROM applied p WHERE r.id = p.run_id AND r.status = 'running'
  ), events AS (
    -- The timeline in each run's order: the firing, then the walk's row (the next step scheduled, or the end).
    INSERT INTO run_events (org_id, run_id, step_id, node_id, attempt, type, lane, worker, data)
    SELECT e.org_id, e.run_id, e.step_id, e.node_id, NULL, e.type, e.lane, p_by, e.data FROM (
      SELECT f.org_id, f.run_id, f.step_id, NULL::text AS node_id, 'timer.fired' AS type, NULL::text AS lane,
             jsonb_build_object('timerId', f.id, 'dueAt', f.due_at, 'latenessMs', round(f.lateness_ms::numeric, 1)) AS data, 1 AS n
      FROM fired f
      UNION ALL
      SELECT p.org_id, p.run_id, p.next_id, p.next_node, 'step.scheduled', p.plan -> 'next' ->> 'lane',
             jsonb_build_object('iteration', p.next_iteration), 2
      FROM applied p WHERE p.next_id IS NOT NULL
      UNION ALL
      SELECT p.org_id, p.run_id, NULL, p.plan ->> 'end', 'run.completed', NULL, NULL, 2
      FROM applied p WHERE p.next_id IS NULL
    ) e ORDER BY e.run_id, e.n
  ), wakeups AS (
    INSERT INTO outbox (org_id, run_id, topic, payload)
    SELECT p.org_id, p.run_id, 'step.ready',
           jsonb_build_object('orgId', p.org_id, 'runId', p.run_id, 'stepId', p.next_id, 'lane', p.plan -> 'next' ->> 'lane')
    FROM applied p WHERE p.next_id IS NOT NULL ORDER BY p.run_id
  ), moves AS MATERIALIZED (
    -- The steps' journey count changes, each as holdfast_count_step makes it for a row (test runs count nothing): a
    -- wait settled here leaves "now" for "passed" at its run's version (as its lock found the run) and its node (as
    -- the update found the step), and a next step that went in enters "now". A wait whose run another transaction
    -- held is counted after this statement (`unlocked`). Then the runs this statement ends (`moved`), as
    -- holdfast_count_run counts a run's end (none is a test run: `applies`).
    SELECT x.org_id, x.version_id, x.settled_node AS node_id, 'now'::text AS from_bucket, 'passed'::text AS to_bucket
    FROM settled x WHERE x.version_id IS NOT NULL AND NOT x.test
    UNION ALL
    SELECT p.org_id, p.version_id, p.next_node, NULL, 'now' FROM applied p WHERE p.next_id IS NOT NULL
    UNION ALL
    -- A run this statement ends, as holdfast_count_run counts it (node '', 'completed'): its trigger stands aside
    -- while holdfast.count_run_end_by_statement is on (20261216100000_count_run_end_by_statement).
    SELECT p.org_id, p.version_id, '', NULL, 'completed' FROM applied p WHERE p.next_id IS NULL
  ), moves_summed AS (
    INSERT INTO count_tallies (org_id, version_id, node_id, from_bucket, to_bucket, n)
    SELECT m.org_id, m.version_id, m.node_id, m.from_bucket, m.to_bucket, count(*) FROM moves m WHERE p_tally
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ), moves_unsummed AS (
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, from_bucket, to_bucket)
    SELECT m.org_id, m.version_id, NULL, m.node_id, m.from_bucket, m.to_bucket FROM moves m WHERE NOT p_tally
  ), unlocked AS MATERIALIZED (
    -- The waits settled here whose run another transaction held: this statement read nothing of that run, and the
    -- holder (a migration) may move it to another version before it lets go. Kept for the count after the statement.
    SELECT set_config('holdfast.count_unlocked', COALESCE(jsonb_agg(x.step_id), '[]'::jsonb)::text, true) AS kept
    FROM settled x WHERE x.version_id IS NULL
  ), edges AS MATERIALIZED (
    SELECT p.org_id, p.version_id, p.run_id, e."nodeId", e.bucket, e.run IS NOT FALSE AS named, e.n
    FROM applied p, ROWS FROM (jsonb_to_recordset(p.plan -> 'edges') AS ("nodeId" text, bucket text, run boolean)) WITH ORDINALITY AS e("nodeId", bucket, run, n)
  ), edges_named AS (
    -- An edge that leaves a split names its run (a plan learnt by a previous release has no "run": named).
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
    SELECT e.org_id, e.version_id, e.run_id, e."nodeId", e.bucket FROM edges e WHERE e.named ORDER BY e.run_id, e.n
  ), edges_summed AS (
    -- Any other: no run; summed when the batch tallies (one row per version, node and edge), else a row each.
    INSERT INTO count_tallies (org_id, version_id, node_id, to_bucket, n)
    SELECT e.org_id, e.version_id, e."nodeId", e.bucket, count(*) FROM edges e WHERE NOT e.named AND p_tally
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ), edges_unsummed AS (
    INSERT INTO count_changes (org_id, version_id, run_id, node_id, to_bucket)
    SELECT e.org_id, e.version_id, NULL, e."nodeId", e.bucket FROM edges e WHERE NOT e.named AND NOT p_tally ORDER BY e.run_id, e.n
  )
  SELECT x.id, x.wake, x.org_id, x.run_id, x.step_id, x.lateness_ms::float8, x.version_id, x.node_id,
         CASE WHEN x.applies IS NOT TRUE OR x.id NOT IN (SELECT a.id FROM applied a) THEN NULL WHEN jsonb_typeof(x.plan -> 'next') = 'object' THEN 'running' ELSE 'completed' END
  FROM facts x
  WHERE (SELECT u.kept FROM unlocked u) IS NOT NULL
  ORDER BY x.run_id, x.id;
  PERFORM set_config('holdfast.count_by_statement', COALESCE(prior, ''), true),
          set_config('holdfast.count_run_end_by_statement', '', true);
  -- The waits of `unlocked`, counted as holdfast_count_step counts a row, with their steps and runs as they are now (a
  -- statement of its own: its snapshot sees what their runs' holders committed meanwhile).
  IF current_setting('holdfast.count_unlocked') <> '[]' THEN
    PERFORM holdfast_count_change(s.org_id, r.version_id, s.node_id, 'now', 'passed')
    FROM jsonb_array_elements_text(current_setting('holdfast.count_unlocked')::jsonb) AS u(step_id)
    JOIN steps s ON s.id = u.step_id
    JOIN runs r ON r.id = s.run_id AND NOT r.test;
  END IF;
  -- The statement's row triggers have fired: what they collected is written now, in this transaction.
  IF p_tally THEN
    PERFORM holdfast_count_tally_flush();
  END IF;
END;
$function$;

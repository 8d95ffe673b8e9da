-- Group commit: settles many steps (of any runs) in one statement and one commit. p_items is an array of settle
-- requests, each the arguments of holdfast_step_settle by name ({"stepId","token","worker","status","output",
-- "error","delayMs","event","eventData","runSeq","rows","retry","effect"}; an absent key is SQL NULL), and "take":
-- true when the item's slot may run a first step taken here if its settle claims no next step. Each item is settled
-- by holdfast_step_settle exactly as it would be alone, fenced by its own attempt: an item whose attempt is stale
-- changes nothing (HF002/HF003 undo that item alone, in its own subtransaction) and answers {"changed": false}, and
-- its neighbours settle.
-- Then, when p_take is given ({"lane","worker","leaseMs","effectKinds"}), the slots the batch frees are filled in the
-- same commit: as many of the lane's due step.ready rows as items that asked to take, settled (changed) and claimed
-- no next step are taken and their steps claimed (holdfast_steps_take_ready, after every settle, skipping a row whose
-- run another transaction holds: this statement already holds its settles' runs, and waiting for one more out of
-- order could make two batches wait on each other), one to each such item's answer as "taken". A first step then costs no commit of its
-- own: at peak every slot is busy, and without this each start's first step waited for a slot to free and a take
-- of its own.
-- Returns {"answers": [the answers in the items' order], "looked": whether it took (p_take given and a slot to fill),
-- "taken": rows taken, "more": whether the take saw another due row after taking its limit}. The caller sends the
-- items sorted by run, so two batches lock their runs in one order; any other error fails the whole batch (nothing
-- of it committed, the take's rows included) and the caller settles its items one by one. Called by store/sql/steps.ts
-- (stepsSettleManyIfToken).
-- With p_tally, the journey count changes of the batch's steps are written summed, one count_tallies row per version,
-- node and move (holdfast_count_tally_start, count_tally_start.sql): a batch of one automation's steps writes a few rows
-- where it wrote two or three a step. A previous release calls it without (its sweeper does not fold count_tallies).
-- History (prisma/migrations, never edited): holdfast_step_settle_many (step_settle_many.sql) until
-- 20261213100000_count_tallies, which added p_tally under this name (a file holds one definition, no overloads); that
-- name is kept for a previous release's processes and calls this without a tally. 20261203170000_settle_takes: the take.
CREATE OR REPLACE FUNCTION holdfast_step_settle_batch(p_items jsonb, p_take jsonb, p_tally boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  item jsonb;
  answer jsonb;
  -- An array grown in place (PL/pgSQL appends to an expanded array), made JSON once: jsonb || jsonb copied the whole
  -- answer list at every item.
  answers jsonb[] := '{}';
  takers integer[] := '{}';
  i integer := 0;
  took jsonb;
  step jsonb;
  k integer := 0;
  set_answers jsonb;
BEGIN
  p_tally := p_tally IS TRUE;
  IF p_tally THEN
    PERFORM holdfast_count_tally_start();
  END IF;
  -- The items that ended their step with the walk their worker made (the common case at peak: a chain's steps) are
  -- settled as sets by holdfast_step_settle_set (step_settle_set.sql); when one of them cannot be (HF007), nothing of
  -- that attempt is kept and every item is settled one by one below, as is every item it left.
  IF jsonb_array_length(p_items) > 0 THEN
    BEGIN
      set_answers := holdfast_step_settle_set(p_items);
    EXCEPTION WHEN SQLSTATE 'HF007' THEN
      set_answers := NULL;
    END;
  END IF;
  FOR item IN SELECT value FROM jsonb_array_elements(p_items) WITH ORDINALITY ORDER BY ordinality LOOP
    i := i + 1;
    answer := set_answers->(i::text);
    IF answer IS NULL THEN
      BEGIN
        answer := holdfast_step_settle(
          item->>'stepId', (item->>'token')::int, item->>'worker', item->>'status', item->'output', item->'error',
          COALESCE((item->>'delayMs')::float8, 0), item->>'event', item->'eventData', (item->>'runSeq')::bigint,
          item->'rows', item->'retry', item->'effect');
      EXCEPTION WHEN SQLSTATE 'HF002' OR SQLSTATE 'HF003' THEN
        answer := '{"changed": false}'::jsonb;
      END;
    END IF;
    answer := COALESCE(answer, '{"changed": false}'::jsonb);
    answers := answers || answer;
    IF (item->>'take')::boolean AND (answer->>'changed')::boolean AND jsonb_typeof(answer->'claimed') IS DISTINCT FROM 'object' THEN
      takers := takers || i;
    END IF;
  END LOOP;
  IF p_tally THEN
    -- The take below claims steps (ready to running: the same bucket, no change); any change it made would be its own row.
    PERFORM holdfast_count_tally_flush();
  END IF;
  IF p_take IS NULL OR cardinality(takers) = 0 THEN
    RETURN jsonb_build_object('answers', to_jsonb(answers), 'looked', false, 'taken', 0, 'more', false);
  END IF;
  -- A row whose run another transaction holds is left for another take (this statement holds its settles' runs).
  took := holdfast_steps_take_ready(p_take->>'lane', cardinality(takers), p_take->>'worker', (p_take->>'leaseMs')::float8,
                                    ARRAY(SELECT jsonb_array_elements_text(p_take->'effectKinds')), true);
  FOR step IN SELECT value FROM jsonb_array_elements(took->'claimed') LOOP
    k := k + 1;
    answers[takers[k]] := answers[takers[k]] || jsonb_build_object('taken', step);
  END LOOP;
  RETURN jsonb_build_object('answers', to_jsonb(answers), 'looked', true, 'taken', took->'taken', 'more', took->'more');
END;
$function$;

-- Group commit: settles many steps (of any runs) in one statement and one commit. p_items is an array of settle
-- requests, each the arguments of holdfast_step_settle by name ({"stepId","token","worker","status","output",
-- "error","delayMs","event","eventData","runSeq","rows","retry","effect"}; an absent key is SQL NULL). Each item is
-- settled by holdfast_step_settle exactly as it would be alone, fenced by its own attempt: an item whose attempt is
-- stale changes nothing (HF002/HF003 undo that item alone, in its own subtransaction) and answers
-- {"changed": false}, and its neighbours settle. Returns the answers in the items' order. The caller sends the
-- items sorted by run, so two batches lock their runs in one order; any other error fails the whole batch (nothing
-- of it committed) and the caller settles its items one by one. Called by sql/steps.ts (stepsSettleManyIfToken).
CREATE OR REPLACE FUNCTION holdfast_step_settle_many(p_items jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  item jsonb;
  answer jsonb;
  -- An array grown in place (PL/pgSQL appends to an expanded array), made JSON once: jsonb || jsonb copied the whole
  -- answer list at every item.
  answers jsonb[] := '{}';
BEGIN
  FOR item IN SELECT value FROM jsonb_array_elements(p_items) WITH ORDINALITY ORDER BY ordinality LOOP
    BEGIN
      answer := holdfast_step_settle(
        item->>'stepId', (item->>'token')::int, item->>'worker', item->>'status', item->'output', item->'error',
        COALESCE((item->>'delayMs')::float8, 0), item->>'event', item->'eventData', (item->>'runSeq')::bigint,
        item->'rows', item->'retry', item->'effect');
    EXCEPTION WHEN SQLSTATE 'HF002' OR SQLSTATE 'HF003' THEN
      answer := '{"changed": false}'::jsonb;
    END;
    answers := answers || COALESCE(answer, '{"changed": false}'::jsonb);
  END LOOP;
  RETURN to_jsonb(answers);
END;
$function$;

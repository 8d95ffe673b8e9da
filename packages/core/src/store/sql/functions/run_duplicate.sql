-- One repeat of the run's start: counted (the UPDATE serialises concurrent repeats on the row, so each gets its own
-- number and the bound is exact), and written to the timeline only while it is among the first `kept`. Both start
-- paths call it: holdfast_run_start and the engine's transactional start (store/sql/runs.ts runsRecordDuplicate).
-- Returns the run's count of repeats so far.
-- History (prisma/migrations, never edited): 20261201111000_defects_a.
CREATE OR REPLACE FUNCTION holdfast_run_duplicate(p_org_id text, p_run_id text, p_event_data jsonb) RETURNS integer AS $$
DECLARE
  kept CONSTANT integer := 3;
  n integer;
BEGIN
  UPDATE runs SET duplicate_deliveries = duplicate_deliveries + 1, last_duplicate_at = now()
  WHERE org_id = p_org_id AND id = p_run_id
  RETURNING duplicate_deliveries INTO n;
  IF n IS NULL THEN
    RAISE EXCEPTION 'run % not found to count a repeated start', p_run_id;
  END IF;
  IF n <= kept THEN
    INSERT INTO run_events (org_id, run_id, type, data)
    VALUES (p_org_id, p_run_id, 'run.duplicate_start',
            COALESCE(p_event_data, '{}'::jsonb) || jsonb_build_object('duplicate', n)
            || CASE WHEN n = kept
                    THEN jsonb_build_object('more', 'later repeats are counted on the run, not written here')
                    ELSE '{}'::jsonb END);
  END IF;
  RETURN n;
END;
$$ LANGUAGE plpgsql;

-- Starts one logical run per (org, start_key) in one statement: the run row (its id made by the starter), then the
-- rows of its first walk exactly as the starter's applier prepared them (run/apply/rows.ts: run.started, inline nodes'
-- events, the first steps with their step.ready outbox rows; holdfast_rows_insert) and, when the walk already ended
-- it, how (p_rows->'finish'). A repeat finds the run and is counted by holdfast_run_duplicate; its rows are dropped.
-- A first walk that needs the engine (a timer) takes the transactional path in TypeScript.
-- p_contact_id: holdfast_contact_resolve(...) in the same statement. Returns {"runId": text, "inserted": bool}.
-- History (prisma/migrations, never edited): 20261129100000_contacts_connections, 20261201111000_defects_a,
-- 20261201121000_one_applier (drops the signature that took the walk's plan and scheduled its steps in SQL),
-- and since 2026-12-02 holdfast_rows_insert takes the run (a row naming another is refused: rows_insert.sql).
CREATE OR REPLACE FUNCTION holdfast_run_start(
  p_run_id text, p_org_id text, p_automation_id text, p_version_id text, p_start_key text, p_input jsonb,
  p_event_data jsonb, p_rows jsonb, p_contact_id text
) RETURNS jsonb AS $$
DECLARE
  run_id text;
BEGIN
  INSERT INTO runs (id, org_id, automation_id, version_id, start_key, input, seq, contact_id)
  VALUES (p_run_id, p_org_id, p_automation_id, p_version_id, p_start_key, p_input, 1, p_contact_id)
  ON CONFLICT (org_id, start_key) DO NOTHING
  RETURNING id INTO run_id;
  IF run_id IS NULL THEN
    -- ON CONFLICT waited for the other start to commit; in PL/pgSQL each statement takes a fresh snapshot
    -- (READ COMMITTED), so this SELECT sees the committed row.
    SELECT id INTO run_id FROM runs WHERE org_id = p_org_id AND start_key = p_start_key;
    IF run_id IS NULL THEN
      RAISE EXCEPTION 'start key % conflicted but no run holds it', p_start_key;
    END IF;
    PERFORM holdfast_run_duplicate(p_org_id, run_id, p_event_data);
    RETURN jsonb_build_object('runId', run_id, 'inserted', false);
  END IF;
  PERFORM holdfast_rows_insert(p_org_id, run_id, p_rows);
  IF jsonb_typeof(p_rows->'finish') = 'object' THEN
    UPDATE runs SET status = p_rows->'finish'->>'status', error = p_rows->'finish'->'error', finished_at = now(),
                    seq = seq + 1, updated_at = now()
    WHERE id = run_id;
  END IF;
  RETURN jsonb_build_object('runId', run_id, 'inserted', true);
END;
$$ LANGUAGE plpgsql;

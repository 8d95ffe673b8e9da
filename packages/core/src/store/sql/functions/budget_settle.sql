-- Settles an attempt's reservation with what it really cost (p_actual; NULL = unknown, the reservation is spent).
-- History (prisma/migrations, never edited): 20261129110000_model_budgets.
CREATE OR REPLACE FUNCTION holdfast_budget_settle(p_org_id text, p_key text, p_owner text, p_actual bigint) RETURNS void AS $$
DECLARE
  held bigint;
BEGIN
  UPDATE budget_reservations SET settled_at = now(), actual_micros = COALESCE(p_actual, micros)
  WHERE org_id = p_org_id AND key = p_key AND owner = p_owner AND settled_at IS NULL
  RETURNING micros INTO held;
  IF FOUND THEN
    UPDATE org_budgets SET reserved_micros = reserved_micros - held, spent_micros = spent_micros + COALESCE(p_actual, held),
                           updated_at = now()
    WHERE org_id = p_org_id;
  END IF;
END;
$$ LANGUAGE plpgsql;

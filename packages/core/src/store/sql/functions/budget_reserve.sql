-- Reserves p_micros for one attempt (key + owner) if the organisation's remaining budget covers it. A repeated call
-- for the same attempt finds its reservation and reserves nothing more. Returns the remaining budget after the
-- reservation, or NULL when refused (no budget set, or not enough left). The budget is per calendar month (UTC): the
-- first call of a new month starts the month's spend at zero.
-- History (prisma/migrations, never edited): 20261129110000_model_budgets, 20261206120000_default_model_budget.
CREATE OR REPLACE FUNCTION holdfast_budget_reserve(p_org_id text, p_key text, p_owner text, p_micros bigint) RETURNS bigint AS $$
DECLARE
  left_after bigint;
BEGIN
  UPDATE org_budgets SET spent_micros = 0, period_start = (date_trunc('month', now() AT TIME ZONE 'UTC'))::date, updated_at = now()
  WHERE org_id = p_org_id AND period_start < (date_trunc('month', now() AT TIME ZONE 'UTC'))::date;
  IF EXISTS (SELECT 1 FROM budget_reservations WHERE org_id = p_org_id AND key = p_key AND owner = p_owner) THEN
    SELECT allowed_micros - reserved_micros - spent_micros INTO left_after FROM org_budgets WHERE org_id = p_org_id;
    RETURN left_after;
  END IF;
  UPDATE org_budgets SET reserved_micros = reserved_micros + p_micros, updated_at = now()
  WHERE org_id = p_org_id AND allowed_micros - reserved_micros - spent_micros >= p_micros
  RETURNING allowed_micros - reserved_micros - spent_micros INTO left_after;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  INSERT INTO budget_reservations (org_id, key, owner, micros) VALUES (p_org_id, p_key, p_owner, p_micros);
  RETURN left_after;
END;
$$ LANGUAGE plpgsql;

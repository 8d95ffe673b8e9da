-- A model budget by default, per calendar month (issue 41): a new organisation gets $20 a month, so Draft steps run
-- from the start instead of waiting on a budget nobody set. Spend counts from the first day of the month (UTC);
-- the first reservation of a new month starts its spend at zero (holdfast_budget_reserve). Organisations that exist
-- already keep what they have; those without a budget get the same default.
ALTER TABLE "org_budgets" ADD COLUMN "period_start" DATE NOT NULL DEFAULT (date_trunc('month', now() AT TIME ZONE 'UTC'))::date;

CREATE FUNCTION holdfast_org_default_budget() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO org_budgets (org_id, allowed_micros) VALUES (NEW.id, 20000000) ON CONFLICT (org_id) DO NOTHING;
  RETURN NEW;
END $$;
CREATE TRIGGER "organisations_default_budget" AFTER INSERT ON "organisations"
  FOR EACH ROW EXECUTE FUNCTION holdfast_org_default_budget();

INSERT INTO org_budgets (org_id, allowed_micros) SELECT id, 20000000 FROM organisations ON CONFLICT (org_id) DO NOTHING;

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

-- A new organisation's model budget: $20 a month (20,000,000 micros), so Draft steps run from the start; owners
-- change it in Settings -> Model budget. SECURITY DEFINER: whoever creates the organisation may not yet see its rows.
-- History (prisma/migrations, never edited): new in 20261206120000_default_model_budget.
CREATE OR REPLACE FUNCTION holdfast_org_default_budget() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO org_budgets (org_id, allowed_micros) VALUES (NEW.id, 20000000) ON CONFLICT (org_id) DO NOTHING;
  RETURN NEW;
END $$;

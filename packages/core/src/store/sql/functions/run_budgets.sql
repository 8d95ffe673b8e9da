-- Trigger on runs (BEFORE INSERT): a new run takes its budgets (max steps, expiry) from the automation, else the
-- organisation, unless the insert names them.
-- History (prisma/migrations, never edited): 20261130010000_run_budgets.
CREATE OR REPLACE FUNCTION holdfast_run_budgets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT COALESCE(NEW.max_steps, a.run_max_steps, o.run_max_steps),
         COALESCE(NEW.expires_at, NEW.created_at + make_interval(secs => COALESCE(a.run_max_age_seconds, o.run_max_age_seconds)))
    INTO NEW.max_steps, NEW.expires_at
  FROM organisations o LEFT JOIN automations a ON a.id = NEW.automation_id AND a.org_id = o.id
  WHERE o.id = NEW.org_id;
  RETURN NEW;
END;
$$;

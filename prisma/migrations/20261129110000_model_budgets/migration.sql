-- Model budgets per organisation and their reservations, in micros (millionths of a US dollar): model_draft reserves its estimate before the call and settles the real cost after (issue 5).
-- CreateTable
CREATE TABLE "org_budgets" (
    "org_id" TEXT NOT NULL,
    "allowed_micros" BIGINT NOT NULL,
    "reserved_micros" BIGINT NOT NULL DEFAULT 0,
    "spent_micros" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "org_budgets_pkey" PRIMARY KEY ("org_id")
);

-- CreateTable
CREATE TABLE "budget_reservations" (
    "org_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "micros" BIGINT NOT NULL,
    "actual_micros" BIGINT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" TIMESTAMPTZ(6),

    CONSTRAINT "budget_reservations_pkey" PRIMARY KEY ("org_id","key","owner")
);


-- Hand-written: tenancy, sanity, and the two budget statements.
ALTER TABLE "org_budgets" ADD CONSTRAINT "org_budgets_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations"("id");
ALTER TABLE "budget_reservations" ADD CONSTRAINT "budget_reservations_org_fkey" FOREIGN KEY ("org_id") REFERENCES "organisations"("id");
ALTER TABLE "org_budgets" ADD CONSTRAINT "org_budgets_amounts_check" CHECK (allowed_micros >= 0 AND reserved_micros >= 0 AND spent_micros >= 0);
CREATE INDEX "budget_reservations_open_idx" ON "budget_reservations" ("created_at") WHERE settled_at IS NULL;

-- Reserves p_micros for one attempt (key + owner) if the organisation's remaining budget covers it. A repeated call
-- for the same attempt finds its reservation and reserves nothing more. Returns the remaining budget after the
-- reservation, or NULL when refused (no budget set, or not enough left).
CREATE FUNCTION holdfast_budget_reserve(p_org_id text, p_key text, p_owner text, p_micros bigint) RETURNS bigint AS $$
DECLARE
  left_after bigint;
BEGIN
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

-- Settles an attempt's reservation with what it really cost (p_actual; NULL = unknown, the reservation is spent).
CREATE FUNCTION holdfast_budget_settle(p_org_id text, p_key text, p_owner text, p_actual bigint) RETURNS void AS $$
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

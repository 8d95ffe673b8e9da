-- A published version never changes: refuse UPDATE and DELETE in the database, not only in code.
-- History (prisma/migrations, never edited): 20261129000000_init.
CREATE OR REPLACE FUNCTION holdfast_refuse_published_version_change() RETURNS trigger AS $$
BEGIN
  IF OLD.published_at IS NOT NULL THEN
    RAISE EXCEPTION 'automation version % (v%) is published and immutable', OLD.id, OLD.version
      USING ERRCODE = 'HF001';
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

-- A step's status as a journey count bucket (journey_counts): ready, running and waiting are all "now", so a claim
-- moves no count; parked is "held"; done is "passed".
-- History (prisma/migrations, never edited): 20261207100000_journey_counts.
CREATE OR REPLACE FUNCTION holdfast_count_bucket(p_status text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_status WHEN 'ready' THEN 'now' WHEN 'running' THEN 'now' WHEN 'waiting' THEN 'now'
                       WHEN 'parked' THEN 'held' WHEN 'done' THEN 'passed' ELSE p_status END
$$;

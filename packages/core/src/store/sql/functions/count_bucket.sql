-- A step's status as a journey count bucket (journey_counts): ready, running and waiting are all "now", so a claim
-- moves no count; parked is "held"; done is "passed".
-- The trigger steps_count_status has this mapping written out in its condition (20261214100000_count_status_when: no
-- function call there); a change here needs a migration that writes that condition again
-- (packages/core/test/count-trigger-condition.test.ts compares the two).
-- History (prisma/migrations, never edited): 20261207100000_journey_counts.
CREATE OR REPLACE FUNCTION holdfast_count_bucket(p_status text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_status WHEN 'ready' THEN 'now' WHEN 'running' THEN 'now' WHEN 'waiting' THEN 'now'
                       WHEN 'parked' THEN 'held' WHEN 'done' THEN 'passed' ELSE p_status END
$$;

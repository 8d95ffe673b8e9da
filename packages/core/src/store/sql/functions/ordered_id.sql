-- A time-ordered id for a row inserted without one (timers; runs written by store/sql/runs.ts): the prefix and 32 hex digits
-- laid out as a UUID version 7 (RFC 9562): 48 bits of the database clock's milliseconds, then 74 random bits
-- (gen_random_uuid's, with the version nibble set to 7). The engine makes run and step ids as UUID version 7 itself
-- (run/apply/rows.ts, the uuid library's v7, whose ids within one millisecond count up from a random start), as it needs
-- them before the insert. Ids made one after the other sort one after the other, so each insert into the indexes keyed
-- by them lands beside the last one instead of on a random page (docs/performance.md, "Cost as data grows"). Ids are
-- names, not secrets (docs/security.md); the first 12 digits tell when the row was made. PostgreSQL 18's uuidv7()
-- would replace this function.
-- History: new in 20261202120000_ordered_ids (runs, steps and timers had 'prefix' || gen_random_uuid() without dashes).
CREATE OR REPLACE FUNCTION holdfast_ordered_id(prefix text)
RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT prefix || encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')
$$;

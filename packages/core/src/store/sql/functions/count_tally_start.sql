-- Journey counts' changes that name no run (a step's: holdfast_count_step, holdfast_count_step_node; an edge that
-- leaves no split: holdfast_rows_insert), written now or summed at the end of the transaction's batch
-- (20261213100000_count_tallies).
-- holdfast_count_tally_start(): from here to holdfast_count_tally_flush(), in this transaction, such a change is kept
-- in transaction-local settings instead of a row of its own: holdfast.count_tally is the number of the chunk being
-- filled, and holdfast.count_tally_<chunk> holds changes as JSON arrays, about 4 kB of them (a list cut in chunks, so
-- that keeping one more copies at most a chunk, not everything kept so far: a due sweep's batch keeps a thousand). A
-- subtransaction rolled back (a stale settle in a batch) takes back what it kept, as it takes back its rows.
-- holdfast_count_tally_flush(): writes what was kept as count_tallies rows, one per organisation, version, node and
-- move with its number of runs, and ends the collecting. The caller that starts collecting must flush before it
-- returns: a change still kept at commit is lost.
-- holdfast_count_change(): one change that names no run: kept when collecting, else one count_changes row.
-- This file: holdfast_count_tally_start; holdfast_count_change and holdfast_count_tally_flush are in their own files.
-- History: new in 20261213100000_count_tallies (issue 47).
-- PL/pgSQL, not SQL: a SQL function called on its own (PERFORM) is planned again at every call, a PL/pgSQL one once a
-- session (a settle batch calls it every batch).
CREATE OR REPLACE FUNCTION holdfast_count_tally_start() RETURNS void LANGUAGE plpgsql AS $function$
BEGIN
  PERFORM set_config('holdfast.count_tally_0', '', true), set_config('holdfast.count_tally', '0', true);
END;
$function$;

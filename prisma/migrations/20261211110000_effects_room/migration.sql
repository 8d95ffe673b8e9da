-- Room for an effect's answer beside its claim (issue 47, WAL a step). An effect row is written at the claim and
-- rewritten once by the settle that records its answer, a few milliseconds later, when its page has filled with the
-- claims written since. With fillfactor 85 about half of those rewrites found no room: the new version went to another
-- page, after a lock record of the old one, with a new entry in each of effects' indexes. fillfactor 50 keeps room for
-- nearly every answer on its claim's page (a HOT update: no index entry), for about 240 bytes fewer WAL an http step
-- in the quick race (`pnpm bench --quick --runs 1000 --skip-peers --only holdfast`: 4,331 -> 4,088 and 4,104 B; 65
-- gave 4,151), at the cost of effects' heap holding its rows about half as densely (pages written from now on).
SET LOCAL lock_timeout = '10s';

ALTER TABLE "effects" SET (fillfactor = 50);

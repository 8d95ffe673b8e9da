/**
 * After its warm-up, every system waits this long before its row's window opens. A PostgreSQL backend keeps the
 * statistics of up to its last second pending and flushes them at its next transaction, or after 10 s idle
 * (PGSTAT_IDLE_INTERVAL): with a shorter wait the warm-up's last commits were counted in the window (commit/st rose by
 * a fifth, for all three systems). The wait also lets what the warm-up left in the background finish (Holdfast's
 * sweeper folds journey counts every second; graphile-worker commits a chain's last job after its body ended).
 * `--quick`, whose warm-up is 5 runs, waits 1.5 s.
 */
export const warmupSettleMs = (quick: boolean): number => (quick ? 1_500 : 11_000);

/** How long a peer may take to launch and run its warm-up before the bench gives up on the row. */
export const peerReadyTimeoutMs = 5 * 60_000;

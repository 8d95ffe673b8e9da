/**
 * After its warm-up, every system waits this long before its row's window opens: what the warm-up left to do in the
 * background (Holdfast's sweeper folds journey counts every second; graphile-worker commits a chain's last job after
 * its body ended) is done outside the measured figures, alike for all three.
 */
export const warmupSettleMs = 1_500;

/** How long a peer may take to launch and run its warm-up before the bench gives up on the row. */
export const peerReadyTimeoutMs = 5 * 60_000;

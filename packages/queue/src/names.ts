/**
 * The queues' names, each a Redis Cluster hash tag: BullMQ's scripts touch several keys of a queue at once, so all
 * of a queue's keys (`<prefix>:{engine}:wait`, `...:{engine}:delayed`, ...) must hash to one slot. Tagging the name
 * rather than the prefix lets the queues land on different masters. A name is written here only; the catalog
 * (packages/core/src/base/catalog.ts) routes topics with these. Own entry point: the catalog is imported where
 * BullMQ and ioredis must not be.
 */
export const queueNames = {
  engine: "{engine}",
  lane: <L extends string>(lane: L) => `{lane-${lane}}` as const,
} as const;

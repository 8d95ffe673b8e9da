// The fault-injecting wrapper around the queue, preloaded (`node --import`) into the relay, the producer of every
// wake-up: a seeded share of BullMQ adds is dropped (the relay believes it published), duplicated (a second job
// with the same payload, a little later) or delayed. Each fault is appended to SOAK_QUEUE_LOG, so the soak counts
// them across restarts. Plain JavaScript: it loads before tsx.
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";

// @holdfast/queue's own bullmq (the same module instance the relay uses).
const require = createRequire(new URL("../../../../packages/queue/package.json", import.meta.url));
const { Queue } = require("bullmq");

const num = (name, fallback) => (process.env[name] === undefined ? fallback : Number(process.env[name]));
const p = { drop: num("SOAK_QUEUE_DROP", 0.02), dup: num("SOAK_QUEUE_DUP", 0.02), delay: num("SOAK_QUEUE_DELAY", 0.05) };
const maxDelayMs = num("SOAK_QUEUE_DELAY_MAX_MS", 3000);
const logFile = process.env.SOAK_QUEUE_LOG;

// mulberry32, seeded by the soak's seed, this process's label and pid (one stream per incarnation).
let state = (num("SOAK_QUEUE_SEED", 1) ^ hash(`${process.env.SOAK_PROCESS ?? "relay"}:${process.pid}`)) >>> 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
function record(kind, queue, name) {
  if (logFile) appendFileSync(logFile, `${kind}\t${queue}\t${name}\n`);
}

/** What the wrapper does to one add: the jobs to really add (none when dropped), each fault recorded. */
function faulty(queue, name, data, opts = {}) {
  const r = random();
  if (r < p.drop) {
    record("drop", queue, name);
    return [];
  }
  if (r < p.drop + p.dup) {
    record("duplicate", queue, name);
    const later = { ...opts, jobId: `${opts.jobId ?? "job"}-dup`, delay: (opts.delay ?? 0) + Math.round(random() * maxDelayMs) };
    return [{ name, data, opts }, { name, data, opts: later }];
  }
  if (r < p.drop + p.dup + p.delay) {
    record("delay", queue, name);
    return [{ name, data, opts: { ...opts, delay: (opts.delay ?? 0) + 200 + Math.round(random() * maxDelayMs) } }];
  }
  return [{ name, data, opts }];
}

const add = Queue.prototype.add;
Queue.prototype.add = async function faultyAdd(name, data, opts = {}) {
  const jobs = faulty(this.name, name, data, opts);
  let first = { id: opts.jobId, name, data };
  for (const [i, job] of jobs.entries()) {
    const added = await add.call(this, job.name, job.data, job.opts);
    if (i === 0) first = added;
  }
  return first;
};

// The relay publishes a batch with one bulk add per queue: each job in it meets the same faults.
const addBulk = Queue.prototype.addBulk;
Queue.prototype.addBulk = async function faultyAddBulk(jobs) {
  const kept = jobs.flatMap((j) => faulty(this.name, j.name, j.data, j.opts));
  return kept.length ? addBulk.call(this, kept) : [];
};

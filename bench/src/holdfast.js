"use strict";
var __assign = (this && this.__assign) || function () {
    __assign = Object.assign || function(t) {
        for (var s, i = 1, n = arguments.length; i < n; i++) {
            s = arguments[i];
            for (var p in s) if (Object.prototype.hasOwnProperty.call(s, p))
                t[p] = s[p];
        }
        return t;
    };
    return __assign.apply(this, arguments);
};
var __awaiter = (this && this.__awaiter) || function (thisArg, _arguments, P, generator) {
    function adopt(value) { return value instanceof P ? value : new P(function (resolve) { resolve(value); }); }
    return new (P || (P = Promise))(function (resolve, reject) {
        function fulfilled(value) { try { step(generator.next(value)); } catch (e) { reject(e); } }
        function rejected(value) { try { step(generator["throw"](value)); } catch (e) { reject(e); } }
        function step(result) { result.done ? resolve(result.value) : adopt(result.value).then(fulfilled, rejected); }
        step((generator = generator.apply(thisArg, _arguments || [])).next());
    });
};
var __generator = (this && this.__generator) || function (thisArg, body) {
    var _ = { label: 0, sent: function() { if (t[0] & 1) throw t[1]; return t[1]; }, trys: [], ops: [] }, f, y, t, g = Object.create((typeof Iterator === "function" ? Iterator : Object).prototype);
    return g.next = verb(0), g["throw"] = verb(1), g["return"] = verb(2), typeof Symbol === "function" && (g[Symbol.iterator] = function() { return this; }), g;
    function verb(n) { return function (v) { return step([n, v]); }; }
    function step(op) {
        if (f) throw new TypeError("Generator is already executing.");
        while (g && (g = 0, op[0] && (_ = 0)), _) try {
            if (f = 1, y && (t = op[0] & 2 ? y["return"] : op[0] ? y["throw"] || ((t = y["return"]) && t.call(y), 0) : y.next) && !(t = t.call(y, op[1])).done) return t;
            if (y = 0, t) op = [op[0] & 2, t.value];
            switch (op[0]) {
                case 0: case 1: t = op; break;
                case 4: _.label++; return { value: op[1], done: false };
                case 5: _.label++; y = op[1]; op = [0]; continue;
                case 7: op = _.ops.pop(); _.trys.pop(); continue;
                default:
                    if (!(t = _.trys, t = t.length > 0 && t[t.length - 1]) && (op[0] === 6 || op[0] === 2)) { _ = 0; continue; }
                    if (op[0] === 3 && (!t || (op[1] > t[0] && op[1] < t[3]))) { _.label = op[1]; break; }
                    if (op[0] === 6 && _.label < t[1]) { _.label = t[1]; t = op; break; }
                    if (t && _.label < t[2]) { _.label = t[2]; _.ops.push(op); break; }
                    if (t[2]) _.ops.pop();
                    _.trys.pop(); continue;
            }
            op = body.call(thisArg, _);
        } catch (e) { op = [6, e]; y = 0; } finally { f = t = 0; }
        if (op[0] & 5) throw op[1]; return { value: op[0] ? op[1] : void 0, done: true };
    }
};
var __spreadArray = (this && this.__spreadArray) || function (to, from, pack) {
    if (pack || arguments.length === 2) for (var i = 0, l = from.length, ar; i < l; i++) {
        if (ar || !(i in from)) {
            if (!ar) ar = Array.prototype.slice.call(from, 0, i);
            ar[i] = from[i];
        }
    }
    return to.concat(ar || Array.prototype.slice.call(from));
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.chainGraph = chainGraph;
exports.runHoldfast = runHoldfast;
var seed_1 = require("@holdfast/cli/seed");
var core_1 = require("@holdfast/core");
var db_1 = require("@holdfast/db");
var procs_1 = require("@holdfast/testkit/procs");
var pg_1 = require("pg");
var pg_2 = require("./pg");
function chainGraph(kind, steps, url) {
    var ids = Array.from({ length: steps }, function (_, i) { return "s".concat(i + 1); });
    var nodes = kind === "http"
        ? ids.map(function (id) { return ({ id: id, kind: "http_request", config: { url: url, method: "POST", body: {} } }); })
        : ids.map(function (id) { return ({ id: id, kind: "branch", config: { condition: { path: "input.n", op: "exists" } } }); });
    var edges = kind === "http"
        ? __spreadArray(["t"], ids, true).map(function (from, i) { var _a; return ({ from: from, to: (_a = ids[i]) !== null && _a !== void 0 ? _a : "e" }); })
        : __spreadArray(["t"], ids, true).flatMap(function (from, i) { var _a; return from === "t" ? [{ from: from, to: ids[0] }] : [{ from: from, to: (_a = ids[i]) !== null && _a !== void 0 ? _a : "e", label: "true" }, { from: from, to: "e", label: "false" }]; });
    return (0, core_1.parseGraph)({ nodes: __spreadArray(__spreadArray([{ id: "t", kind: "trigger", config: { eventIdField: "id" } }], nodes, true), [{ id: "e", kind: "end" }], false), edges: edges });
}
var quantile = function (sorted, q) { var _a; return (_a = sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]) !== null && _a !== void 0 ? _a : Number.NaN; };
function runHoldfast(s, env) {
    return __awaiter(this, void 0, void 0, function () {
        var db, slug, common, prof, apps, cpuBefore, before, started, next, startOne, interval, pending, _loop_1, i, sql, deadline, rows, after, cpuAfter, window, _a, secs, completed, lat, stepCheck, dispatch, d_1, expectedSteps, stepsDone, totalSteps, d, nodeCpu;
        var _this = this;
        return __generator(this, function (_b) {
            switch (_b.label) {
                case 0:
                    db = (0, db_1.createDb)(env.url, { poolSize: 20, applicationName: "holdfast-bench" });
                    slug = "".concat(s.kind, "-").concat(s.steps, "-").concat(Math.random().toString(36).slice(2, 8));
                    return [4 /*yield*/, (0, seed_1.ensurePublished)(db, {
                            orgSlug: "bench",
                            orgName: "Bench",
                            automationSlug: slug,
                            automationName: slug,
                            graph: chainGraph(s.kind, s.steps, env.noopUrl),
                        })];
                case 1:
                    _b.sent();
                    common = __assign({ DATABASE_URL: env.url, QUEUE_PREFIX: env.redisPrefix, LOG_LEVEL: "warn", DB_POOL_SIZE: "10" }, (s.sweepOnly ? { HOLDFAST_WAKEUPS: "poll" } : {}));
                    prof = function (name) { return (s.profileDir ? { NODE_OPTIONS: "--cpu-prof --cpu-prof-dir=".concat(s.profileDir, " --cpu-prof-name=").concat(name, ".cpuprofile") } : {}); };
                    apps = __spreadArray([
                        (0, procs_1.spawnApp)("relay", { env: __assign(__assign({}, common), prof("relay")) }),
                        (0, procs_1.spawnApp)("engine", { env: __assign(__assign(__assign({}, common), { ENGINE_CONCURRENCY: "16" }), prof("engine")) }),
                        (0, procs_1.spawnApp)("sweeper", { env: __assign(__assign({}, common), { SWEEP_INTERVAL_MS: "1000" }) })
                    ], Array.from({ length: s.laneWorkers }, function (_, i) {
                        return (0, procs_1.spawnApp)("lane-worker", { env: __assign(__assign(__assign({}, common), { LANE: "io", LANE_CONCURRENCY: "32" }), prof("lane-io-".concat(i))), label: "lane-io-".concat(i) });
                    }), true);
                    return [4 /*yield*/, Promise.all(apps.map(function (a) { return a.waitForOutput(/"level":(30|40)|ready/, 30000).catch(function () { }); }))];
                case 2:
                    _b.sent();
                    return [4 /*yield*/, new Promise(function (r) { return setTimeout(r, 1500); })];
                case 3:
                    _b.sent();
                    cpuBefore = apps.map(function (a) { return (0, pg_2.pidCpu)(a.pid()); });
                    return [4 /*yield*/, (0, pg_2.counters)(env.url, env.dbName)];
                case 4:
                    before = _b.sent();
                    started = Date.now();
                    next = 0;
                    startOne = function (i) { return __awaiter(_this, void 0, void 0, function () {
                        return __generator(this, function (_a) {
                            switch (_a.label) {
                                case 0: return [4 /*yield*/, (0, core_1.startRun)(db, {
                                        orgSlug: "bench",
                                        automationSlug: slug,
                                        rawBody: "{}",
                                        body: { id: "r".concat(i), n: i },
                                        headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
                                        via: "bench",
                                    })];
                                case 1:
                                    _a.sent();
                                    return [2 /*return*/];
                            }
                        });
                    }); };
                    if (!s.rate) return [3 /*break*/, 10];
                    interval = 1000 / s.rate;
                    pending = [];
                    _loop_1 = function (i) {
                        var due, wait;
                        return __generator(this, function (_c) {
                            switch (_c.label) {
                                case 0:
                                    due = started + i * interval;
                                    wait = due - Date.now();
                                    if (!(wait > 0)) return [3 /*break*/, 2];
                                    return [4 /*yield*/, new Promise(function (r) { return setTimeout(r, wait); })];
                                case 1:
                                    _c.sent();
                                    _c.label = 2;
                                case 2:
                                    pending.push(startOne(i));
                                    return [2 /*return*/];
                            }
                        });
                    };
                    i = 0;
                    _b.label = 5;
                case 5:
                    if (!(i < s.runs)) return [3 /*break*/, 8];
                    return [5 /*yield**/, _loop_1(i)];
                case 6:
                    _b.sent();
                    _b.label = 7;
                case 7:
                    i++;
                    return [3 /*break*/, 5];
                case 8: return [4 /*yield*/, Promise.all(pending)];
                case 9:
                    _b.sent();
                    return [3 /*break*/, 12];
                case 10: return [4 /*yield*/, Promise.all(Array.from({ length: 16 }, function () { return __awaiter(_this, void 0, void 0, function () {
                        return __generator(this, function (_a) {
                            switch (_a.label) {
                                case 0:
                                    if (!(next < s.runs)) return [3 /*break*/, 2];
                                    return [4 /*yield*/, startOne(next++)];
                                case 1:
                                    _a.sent();
                                    return [3 /*break*/, 0];
                                case 2: return [2 /*return*/];
                            }
                        });
                    }); }))];
                case 11:
                    _b.sent();
                    _b.label = 12;
                case 12:
                    sql = new pg_1.default.Client({ connectionString: env.url });
                    return [4 /*yield*/, sql.connect()];
                case 13:
                    _b.sent();
                    deadline = Date.now() + 10 * 60000;
                    _b.label = 14;
                case 14: return [4 /*yield*/, sql.query("SELECT count(*) FILTER (WHERE status <> 'running')::int AS done, count(*)::int AS n FROM runs r JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1", [slug])];
                case 15:
                    rows = (_b.sent()).rows;
                    if (rows[0].done >= s.runs)
                        return [3 /*break*/, 18];
                    if (Date.now() > deadline)
                        throw new Error("".concat(s.label, ": only ").concat(rows[0].done, "/").concat(s.runs, " runs finished"));
                    return [4 /*yield*/, new Promise(function (r) { return setTimeout(r, 100); })];
                case 16:
                    _b.sent();
                    _b.label = 17;
                case 17: return [3 /*break*/, 14];
                case 18: return [4 /*yield*/, new Promise(function (r) { return setTimeout(r, 1200); })];
                case 19:
                    _b.sent(); // let backends flush their statistics
                    return [4 /*yield*/, (0, pg_2.counters)(env.url, env.dbName)];
                case 20:
                    after = _b.sent();
                    cpuAfter = apps.map(function (a) { return (0, pg_2.pidCpu)(a.pid()); });
                    return [4 /*yield*/, Promise.all(apps.map(function (a) { return a.stop(); }))];
                case 21:
                    _b.sent();
                    return [4 /*yield*/, sql.query("SELECT EXTRACT(EPOCH FROM max(r.finished_at) - min(r.created_at))::float8 AS secs,\n            count(*) FILTER (WHERE r.status = 'completed')::int AS completed,\n            array_agg(EXTRACT(EPOCH FROM r.finished_at - r.created_at) * 1000 ORDER BY r.finished_at - r.created_at) AS lat\n     FROM runs r JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1", [slug])];
                case 22:
                    window = _b.sent();
                    _a = window.rows[0], secs = _a.secs, completed = _a.completed;
                    lat = window.rows[0].lat.map(Number);
                    return [4 /*yield*/, sql.query("SELECT count(*)::int AS steps,\n            count(*) FILTER (WHERE s.status = 'done')::int AS done,\n            (SELECT count(*)::int FROM run_events e JOIN runs r2 ON r2.id = e.run_id JOIN automations a2 ON a2.id = r2.automation_id\n              WHERE a2.slug = $1 AND e.type = 'step.succeeded') AS settles\n     FROM steps s JOIN runs r ON r.id = s.run_id JOIN automations a ON a.id = r.automation_id WHERE a.slug = $1", [slug])];
                case 23:
                    stepCheck = _b.sent();
                    dispatch = [];
                    if (!(s.kind === "http")) return [3 /*break*/, 25];
                    return [4 /*yield*/, sql.query("WITH ev AS (\n         SELECT e.run_id, e.type, e.at, lag(e.type) OVER w AS prev_type, lag(e.at) OVER w AS prev_at\n         FROM run_events e JOIN runs r ON r.id = e.run_id JOIN automations a ON a.id = r.automation_id\n         WHERE a.slug = $1 AND e.type IN ('step.succeeded', 'step.claimed')\n         WINDOW w AS (PARTITION BY e.run_id ORDER BY e.id))\n       SELECT EXTRACT(EPOCH FROM at - prev_at) * 1000 AS ms FROM ev\n       WHERE type = 'step.claimed' AND prev_type = 'step.succeeded' ORDER BY 1", [slug])];
                case 24:
                    d_1 = _b.sent();
                    dispatch = d_1.rows.map(function (r) { return Number(r.ms); });
                    _b.label = 25;
                case 25: return [4 /*yield*/, sql.end()];
                case 26:
                    _b.sent();
                    return [4 /*yield*/, db.$disconnect()];
                case 27:
                    _b.sent();
                    expectedSteps = s.kind === "http" ? s.runs * s.steps : 0;
                    stepsDone = s.kind === "http" ? stepCheck.rows[0].done : completed * s.steps;
                    totalSteps = s.runs * s.steps;
                    d = (0, pg_2.diff)(before, after);
                    nodeCpu = cpuAfter.reduce(function (a, b, i) { var _a; return a + b - ((_a = cpuBefore[i]) !== null && _a !== void 0 ? _a : 0); }, 0);
                    return [2 /*return*/, {
                            label: s.label,
                            runs: s.runs,
                            steps: totalSteps,
                            seconds: secs,
                            runsPerSec: completed / secs,
                            stepsPerSec: stepsDone / secs,
                            latencyMs: { p50: quantile(lat, 0.5), p95: quantile(lat, 0.95), p99: quantile(lat, 0.99) },
                            dispatchMs: dispatch.length ? { p50: quantile(dispatch, 0.5), p99: quantile(dispatch, 0.99) } : null,
                            commitsPerStep: d.commits / totalSteps,
                            walBytesPerStep: d.walBytes / totalSteps,
                            nodeCpuPer1kSteps: (nodeCpu / totalSteps) * 1000,
                            pgCpuPer1kSteps: (d.pgCpu / totalSteps) * 1000,
                            lost: s.runs - completed + (s.kind === "http" ? expectedSteps - stepCheck.rows[0].done : 0),
                            duplicated: s.kind === "http" ? stepCheck.rows[0].settles - stepCheck.rows[0].done : 0,
                        }];
            }
        });
    });
}

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
var _a;
Object.defineProperty(exports, "__esModule", { value: true });
var node_child_process_1 = require("node:child_process");
var node_path_1 = require("node:path");
var node_url_1 = require("node:url");
var node_util_1 = require("node:util");
var holdfast_1 = require("./holdfast");
var pg_1 = require("./pg");
var here = (0, node_path_1.dirname)((0, node_url_1.fileURLToPath)(import.meta.url));
var values = (0, node_util_1.parseArgs)({
    options: {
        quick: { type: "boolean", default: false },
        runs: { type: "string" },
        only: { type: "string" },
        profile: { type: "string" },
    },
}).values;
function startNoop() {
    return __awaiter(this, void 0, void 0, function () {
        var child, port;
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    child = (0, node_child_process_1.spawn)(process.execPath, ["--import", "tsx", (0, node_path_1.join)(here, "noop-server.ts")], { stdio: ["ignore", "pipe", "inherit"] });
                    return [4 /*yield*/, new Promise(function (resolve) {
                            child.stdout.on("data", function (d) {
                                var m = /listening (\d+)/.exec(d.toString());
                                if (m === null || m === void 0 ? void 0 : m[1])
                                    resolve(m[1]);
                            });
                        })];
                case 1:
                    port = _a.sent();
                    return [2 /*return*/, { url: "http://127.0.0.1:".concat(port, "/noop"), stop: function () { return child.kill(); }, pid: child.pid }];
            }
        });
    });
}
var fmt = function (n, d) {
    if (d === void 0) { d = 0; }
    return (Number.isFinite(n) ? n.toFixed(d) : "-");
};
function row(r) {
    return [
        r.label.padEnd(28),
        fmt(r.runsPerSec, 1).padStart(8),
        fmt(r.stepsPerSec).padStart(8),
        "".concat(fmt(r.latencyMs.p50), "/").concat(fmt(r.latencyMs.p95), "/").concat(fmt(r.latencyMs.p99)).padStart(16),
        (r.dispatchMs ? "".concat(fmt(r.dispatchMs.p50, 1), "/").concat(fmt(r.dispatchMs.p99, 1)) : "-").padStart(12),
        fmt(r.commitsPerStep, 2).padStart(8),
        fmt(r.walBytesPerStep).padStart(8),
        fmt(r.nodeCpuPer1kSteps, 2).padStart(8),
        fmt(r.pgCpuPer1kSteps, 2).padStart(8),
        "".concat(r.lost, "/").concat(r.duplicated).padStart(8),
    ].join(" ");
}
var dbName = "holdfast_bench";
var url = await (0, pg_1.freshDatabase)(dbName);
var noop = await startNoop();
var env = { url: url, dbName: dbName, redisPrefix: "hf_bench_".concat(process.pid), noopUrl: noop.url };
var runs = Number((_a = values.runs) !== null && _a !== void 0 ? _a : (values.quick ? 50 : 500));
var scenarios = [__assign({ label: "http x10, 1 worker", kind: "http", runs: runs, steps: 10, laneWorkers: 1 }, (values.profile ? { profileDir: values.profile } : {}))];
console.log("".concat("scenario".padEnd(28), " ").concat("runs/s".padStart(8), " ").concat("steps/s".padStart(8), " ").concat("lat p50/95/99".padStart(16), " ").concat("disp p50/99".padStart(12), " ").concat("com/step".padStart(8), " ").concat("WAL/step".padStart(8), " ").concat("nodeCPU".padStart(8), " ").concat("pgCPU".padStart(8), " ").concat("lost/dup".padStart(8)));
for (var _i = 0, scenarios_1 = scenarios; _i < scenarios_1.length; _i++) {
    var s = scenarios_1[_i];
    console.log(row(await (0, holdfast_1.runHoldfast)(s, env)));
}
noop.stop();
process.exit(0);

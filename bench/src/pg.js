"use strict";
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
exports.adminUrl = void 0;
exports.urlFor = urlFor;
exports.freshDatabase = freshDatabase;
exports.dropDatabase = dropDatabase;
exports.pidCpu = pidCpu;
exports.counters = counters;
exports.diff = diff;
exports.setting = setting;
var node_fs_1 = require("node:fs");
var db_1 = require("@holdfast/db");
var pg_1 = require("pg");
exports.adminUrl = (_a = process.env.BENCH_ADMIN_URL) !== null && _a !== void 0 ? _a : "postgresql://postgres@127.0.0.1:5432/postgres";
function urlFor(name) {
    var u = new URL(exports.adminUrl);
    u.pathname = "/".concat(name);
    return u.toString();
}
/** A fresh, migrated database (dropped first if it exists). */
function freshDatabase(name_1) {
    return __awaiter(this, arguments, void 0, function (name, migrated) {
        var admin, url;
        if (migrated === void 0) { migrated = true; }
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    admin = new pg_1.default.Client({ connectionString: exports.adminUrl });
                    return [4 /*yield*/, admin.connect()];
                case 1:
                    _a.sent();
                    return [4 /*yield*/, admin.query("DROP DATABASE IF EXISTS ".concat(name, " WITH (FORCE)"))];
                case 2:
                    _a.sent();
                    return [4 /*yield*/, admin.end()];
                case 3:
                    _a.sent();
                    url = urlFor(name);
                    return [4 /*yield*/, (0, db_1.ensureDatabase)(url)];
                case 4:
                    _a.sent();
                    if (!migrated) return [3 /*break*/, 6];
                    return [4 /*yield*/, (0, db_1.migrate)(url)];
                case 5:
                    _a.sent();
                    _a.label = 6;
                case 6: return [2 /*return*/, url];
            }
        });
    });
}
function dropDatabase(name) {
    return __awaiter(this, void 0, void 0, function () {
        var admin;
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    admin = new pg_1.default.Client({ connectionString: exports.adminUrl });
                    return [4 /*yield*/, admin.connect()];
                case 1:
                    _a.sent();
                    return [4 /*yield*/, admin.query("DROP DATABASE IF EXISTS ".concat(name, " WITH (FORCE)"))];
                case 2:
                    _a.sent();
                    return [4 /*yield*/, admin.end()];
                case 3:
                    _a.sent();
                    return [2 /*return*/];
            }
        });
    });
}
var ticks = 100; // USER_HZ on Linux
function procCpu(pid, children) {
    var _a, _b;
    try {
        var fields = (_b = (_a = (0, node_fs_1.readFileSync)("/proc/".concat(pid, "/stat"), "utf8").split(") ")[1]) === null || _a === void 0 ? void 0 : _a.split(" ")) !== null && _b !== void 0 ? _b : [];
        // fields[11..14] = utime, stime, cutime, cstime (1-based 14..17 in proc(5), shifted by the split)
        var own = Number(fields[11]) + Number(fields[12]);
        return (own + (children ? Number(fields[13]) + Number(fields[14]) : 0)) / ticks;
    }
    catch (_c) {
        return 0;
    }
}
function pidCpu(pid) {
    return pid ? procCpu(pid, true) : 0;
}
function postgresCpu() {
    var _a;
    var total = 0;
    var postmaster = 0;
    for (var _i = 0, _b = (0, node_fs_1.readdirSync)("/proc"); _i < _b.length; _i++) {
        var entry = _b[_i];
        if (!/^\d+$/.test(entry))
            continue;
        var comm = "";
        try {
            comm = (0, node_fs_1.readFileSync)("/proc/".concat(entry, "/comm"), "utf8").trim();
        }
        catch (_c) {
            continue;
        }
        if (comm !== "postgres")
            continue;
        var ppid = Number((_a = (0, node_fs_1.readFileSync)("/proc/".concat(entry, "/stat"), "utf8").split(") ")[1]) === null || _a === void 0 ? void 0 : _a.split(" ")[1]);
        var parentComm = "";
        try {
            parentComm = (0, node_fs_1.readFileSync)("/proc/".concat(ppid, "/comm"), "utf8").trim();
        }
        catch (_d) { }
        if (parentComm !== "postgres") {
            postmaster = Number(entry);
            total += procCpu(postmaster, true); // includes children that have exited
        }
        else
            total += procCpu(Number(entry), false);
    }
    return total;
}
function counters(url, dbName) {
    return __awaiter(this, void 0, void 0, function () {
        var c, commits, wal;
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    c = new pg_1.default.Client({ connectionString: url });
                    return [4 /*yield*/, c.connect()];
                case 1:
                    _a.sent();
                    return [4 /*yield*/, c.query("SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = $1", [dbName])];
                case 2:
                    commits = _a.sent();
                    return [4 /*yield*/, c.query("SELECT wal_bytes::float8 AS n FROM pg_stat_wal")];
                case 3:
                    wal = _a.sent();
                    return [4 /*yield*/, c.end()];
                case 4:
                    _a.sent();
                    return [2 /*return*/, { commits: commits.rows[0].n, walBytes: wal.rows[0].n, pgCpu: postgresCpu() }];
            }
        });
    });
}
function diff(a, b) {
    return { commits: b.commits - a.commits, walBytes: b.walBytes - a.walBytes, pgCpu: b.pgCpu - a.pgCpu };
}
function setting(url, name) {
    return __awaiter(this, void 0, void 0, function () {
        var c, r;
        return __generator(this, function (_a) {
            switch (_a.label) {
                case 0:
                    c = new pg_1.default.Client({ connectionString: url });
                    return [4 /*yield*/, c.connect()];
                case 1:
                    _a.sent();
                    return [4 /*yield*/, c.query("SELECT current_setting($1) AS v", [name])];
                case 2:
                    r = _a.sent();
                    return [4 /*yield*/, c.end()];
                case 3:
                    _a.sent();
                    return [2 /*return*/, r.rows[0].v];
            }
        });
    });
}

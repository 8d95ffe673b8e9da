"use strict";
var __spreadArray = (this && this.__spreadArray) || function (to, from, pack) {
    if (pack || arguments.length === 2) for (var i = 0, l = from.length, ar; i < l; i++) {
        if (ar || !(i in from)) {
            if (!ar) ar = Array.prototype.slice.call(from, 0, i);
            ar[i] = from[i];
        }
    }
    return to.concat(ar || Array.prototype.slice.call(from));
};
var _a;
Object.defineProperty(exports, "__esModule", { value: true });
// A no-op HTTP endpoint in its own process: answers 200 at once and counts calls per Idempotency-Key so the
// benchmark can check afterwards that no effect was lost or sent twice. GET /stats returns the counts.
var node_http_1 = require("node:http");
var calls = new Map();
var server = (0, node_http_1.createServer)(function (req, res) {
    if (req.method === "GET" && req.url === "/stats") {
        var repeated = 0;
        for (var _i = 0, _a = calls.values(); _i < _a.length; _i++) {
            var n = _a[_i];
            if (n > 1)
                repeated++;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ keys: calls.size, repeated: repeated, total: __spreadArray([], calls.values(), true).reduce(function (a, b) { return a + b; }, 0) }));
        return;
    }
    if (req.method === "POST" && req.url === "/reset") {
        calls.clear();
        res.end("{}");
        return;
    }
    req.resume();
    req.on("end", function () {
        var _a, _b;
        var key = String((_a = req.headers["idempotency-key"]) !== null && _a !== void 0 ? _a : "");
        calls.set(key, ((_b = calls.get(key)) !== null && _b !== void 0 ? _b : 0) + 1);
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
    });
});
server.keepAliveTimeout = 60000;
server.listen(Number((_a = process.env.PORT) !== null && _a !== void 0 ? _a : 0), "127.0.0.1", function () {
    var address = server.address();
    process.stdout.write("listening ".concat(typeof address === "object" && address ? address.port : "", "\n"));
});

import type { NextConfig } from "next";

const config: NextConfig = {
  // Workspace packages export their TypeScript source, so Next compiles them like app code.
  transpilePackages: ["@holdfast/core", "@holdfast/db", "@holdfast/queue"],
  // Node-only libraries (native bindings, worker threads, dynamic requires) load from node_modules at run time.
  serverExternalPackages: ["pg", "pino", "@prisma/adapter-pg", "@prisma/client", "bullmq", "ioredis", "@slack/bolt", "prom-client"],
  poweredByHeader: false,
  experimental: {
    // The app's server actions post a few small form fields (a decision, a note): refuse anything bigger early.
    serverActions: { bodySizeLimit: "64kb" },
  },
};

export default config;

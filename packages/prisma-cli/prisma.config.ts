import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma/config";

// Only `migrate diff` is run from here (no connection is made for --from-empty / --from-schema-datamodel).
export default defineConfig({
  schema: "../../prisma/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  adapter: async () =>
    new PrismaPg({ connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" }),
});

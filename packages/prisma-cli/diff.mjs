// Prints the SQL that takes the schema from `--from` (default: empty) to prisma/schema.prisma.
// Prisma 6 needs `url` in the datasource block and Prisma 7 refuses it, so a temporary copy gets one.
// Usage: node diff.mjs [old-schema.prisma]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const withUrl = (file) => {
  const text = readFileSync(file, "utf8").replace(
    /datasource db \{([^}]*)\}/,
    (_m, body) => `datasource db {${body}  url = env("DATABASE_URL")\n}`,
  );
  const out = join(mkdtempSync(join(tmpdir(), "hf-prisma-")), "schema.prisma");
  writeFileSync(out, text);
  return out;
};

const from = process.argv[2] ? ["--from-schema-datamodel", withUrl(process.argv[2])] : ["--from-empty"];
const here = dirname(fileURLToPath(import.meta.url));
const sql = execFileSync(
  join(here, "node_modules/.bin/prisma"),
  ["migrate", "diff", ...from, "--to-schema-datamodel", withUrl(join(here, "../../prisma/schema.prisma")), "--script"],
  {
    env: {
      ...process.env,
      DATABASE_URL: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
      PRISMA_QUERY_ENGINE_LIBRARY: "/dev/null",
      PRISMA_SCHEMA_ENGINE_BINARY: "/bin/true",
      PRISMA_HIDE_UPDATE_MESSAGE: "1",
    },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  },
);
process.stdout.write(sql);

import type { NextConfig } from "next";

const config: NextConfig = {
  // Server code reaches Postgres (and, through @prim/db, the engine's native SQLite binding):
  // loaded by Node at run time, never bundled.
  serverExternalPackages: ["@prim/db", "@prim/engine", "@prim/wire", "pg", "better-sqlite3", "@prisma/adapter-pg"],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;

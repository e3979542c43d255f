import { defineConfig } from "prisma/config";

// The datasource URL lives here in Prisma 7; generate needs none (migrations are SQL files
// applied by `prim migrate`, not by Prisma's migrate engine, which cannot be downloaded here).
export default defineConfig({
  schema: "prisma/schema.prisma",
  datasource: { url: process.env.DATABASE_URL ?? "postgres://postgres@localhost:5432/prim" },
});

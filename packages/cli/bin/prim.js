#!/usr/bin/env node
// better-sqlite3 13 needs Node-API 10 (Node >= 22.14): on an older Node loading it crashes the
// process with a segmentation fault (measured on 22.12.0 and 22.13.1), so say so first.
if (Number(process.versions.napi) < 10) {
  console.error(
    `prim needs Node >= 22.14 (this is ${process.version}); in the repository, npm start and npx prim use the project's own Node`,
  );
  process.exit(1);
}
const { main } = await import("../dist/main.js");

main(process.argv.slice(2)).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

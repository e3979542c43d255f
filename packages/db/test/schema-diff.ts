// "The Prisma schema and the database agree": both sides are reduced to the same set of facts
// (tables, columns with type and nullability, primary keys, unique constraints, indexes) and
// compared both ways. The schema side comes from Prisma's own parser (the DMMF of the
// prisma-schema wasm module, offline); the database side from pg_catalog.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type pg from "pg";

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: string;
  type: string;
  isList: boolean;
  isRequired: boolean;
  nativeType?: [string, string[]] | null;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  fields: { name: string }[];
}

const SCALAR: Record<string, string> = {
  String: "text",
  Boolean: "boolean",
  Int: "integer",
  BigInt: "bigint",
  Float: "double precision",
  Json: "jsonb",
  DateTime: "timestamp(3) without time zone",
};

function columnType(field: DmmfField): string {
  if (field.isList) return `${SCALAR[field.type]}[]`;
  const native = field.nativeType;
  if (native?.[0] === "Timestamptz") return `timestamp(${native[1][0] ?? 6}) with time zone`;
  if (native !== null && native !== undefined) {
    const [name, args] = native;
    return args.length === 0 ? name.toLowerCase() : `${name.toLowerCase()}(${args.join(",")})`;
  }
  return SCALAR[field.type] ?? `unknown ${field.type}`;
}

/** The schema's facts. */
export function schemaFacts(schemaPath: string): Set<string> {
  const wasm = createRequire(import.meta.url)("@prisma/prisma-schema-wasm") as { get_dmmf(params: string): string };
  const dmmf = JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: readFileSync(schemaPath, "utf8") }))) as {
    datamodel: { models: DmmfModel[]; indexes: DmmfIndex[] };
  };
  const facts = new Set<string>();
  const columnsOf = new Map<string, Map<string, string>>();
  for (const model of dmmf.datamodel.models) {
    const table = model.dbName ?? model.name;
    facts.add(`table ${table}`);
    const columns = new Map<string, string>();
    for (const field of model.fields.filter((f) => f.kind === "scalar" || f.kind === "enum")) {
      const column = field.dbName ?? field.name;
      columns.set(field.name, column);
      // Prisma never writes NOT NULL on a list column.
      const nullable = field.isList || !field.isRequired;
      facts.add(`column ${table}.${column} ${columnType(field)}${nullable ? " null" : " not null"}`);
    }
    columnsOf.set(model.name, columns);
  }
  for (const index of dmmf.datamodel.indexes) {
    const model = dmmf.datamodel.models.find((m) => m.name === index.model) as DmmfModel;
    const cols = index.fields.map((f) => columnsOf.get(index.model)?.get(f.name) ?? f.name).join(",");
    const kind = index.type === "id" ? "primary key" : index.type === "unique" ? "unique" : "index";
    facts.add(`${kind} ${model.dbName ?? model.name}(${cols})`);
  }
  return facts;
}

/** The database's facts (public schema; partitions and Prisma's bookkeeping table left out). */
export async function databaseFacts(client: pg.Client): Promise<Set<string>> {
  const facts = new Set<string>();
  const tables = await client.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
       AND c.relname <> '_prisma_migrations'`,
  );
  const names = tables.rows.map((r) => r.relname);
  for (const table of names) facts.add(`table ${table}`);
  const columns = await client.query<{ table: string; column: string; type: string; notnull: boolean }>(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE c.relname = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped`,
    [names],
  );
  for (const c of columns.rows)
    facts.add(`column ${c.table}.${c.column} ${c.type}${c.notnull ? " not null" : " null"}`);
  const indexes = await client.query<{ table: string; primary: boolean; unique: boolean; cols: string }>(
    `SELECT t.relname AS table, i.indisprimary AS primary, i.indisunique AS unique,
       (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum) AS cols
     FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname = ANY($1)`,
    [names],
  );
  for (const i of indexes.rows) {
    facts.add(`${i.primary ? "primary key" : i.unique ? "unique" : "index"} ${i.table}(${i.cols})`);
  }
  return facts;
}

/** What one side has and the other lacks. */
export function diffFacts(
  schema: Set<string>,
  database: Set<string>,
): { onlyInSchema: string[]; onlyInDatabase: string[] } {
  return {
    onlyInSchema: [...schema].filter((f) => !database.has(f)).sort(),
    onlyInDatabase: [...database].filter((f) => !schema.has(f)).sort(),
  };
}

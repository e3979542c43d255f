"use client";
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

/** A db primitive's SQL console (read-only for members: their principal is narrowed to `db_query`). */
export function DbConsole({ workspace, primitive }: { workspace: string; primitive: string }) {
  const trpc = useTRPC();
  const [sql, setSql] = useState("SELECT name FROM sqlite_master WHERE type = 'table'");
  const run = useMutation(trpc.primitive.dbQuery.mutationOptions());
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    run.mutate({ workspace, primitive, sql });
  }
  return (
    <div className="mt-4">
      <form onSubmit={submit}>
        <label htmlFor="sql" className="font-medium">
          SQL
        </label>
        <textarea
          id="sql"
          value={sql}
          onChange={(e) => setSql(e.target.value)}
          rows={3}
          className="mt-1 block w-full rounded border p-2 font-mono text-sm"
        />
        <button type="submit" className="mt-2 rounded bg-zinc-900 px-3 py-1 text-sm text-white">
          Run
        </button>
      </form>
      <ErrorText error={run.error} className="mt-2" />
      {run.data !== undefined && (
        <div className="mt-2 overflow-x-auto">
          <table className="w-full text-left font-mono text-sm">
            <thead>
              <tr>
                {run.data.columns.map((c) => (
                  <th key={c} className="border-b pr-4">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {run.data.rows.map((row, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: result rows have no identity
                <tr key={i}>
                  {run.data.columns.map((c) => (
                    <td key={c} className="border-b pr-4">
                      {JSON.stringify(row[c])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          <p className="text-xs text-zinc-600">
            {run.data.rows.length} rows{run.data.truncated ? " (truncated)" : ""}
            {run.data.rows_affected > 0 ? ` · ${run.data.rows_affected} changed` : ""}
          </p>
        </div>
      )}
    </div>
  );
}

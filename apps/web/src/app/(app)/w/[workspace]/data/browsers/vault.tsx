"use client";
import { type Props, State, useView } from "./shared";

/** Secret names and versions, and grants: never a value. */
export function VaultBrowser(props: Props) {
  const secrets = useView<{ name: string; version?: number; updated_at?: number }>(props, "vault.list");
  const grants = useView<{ name: string; hosts?: string[]; methods?: string[] }>(props, "vault.grants");
  return (
    <div className="mt-4 text-sm">
      <h3 className="font-medium">Secrets (names only)</h3>
      <State query={secrets} empty="No secrets." />
      <ul>
        {secrets.data?.data.map((s) => (
          <li key={s.name} className="font-mono">
            {s.name} <span className="text-zinc-600">v{s.version ?? 1}</span>
          </li>
        ))}
      </ul>
      <h3 className="mt-3 font-medium">Grants</h3>
      <State query={grants} empty="No grants." />
      <ul>
        {grants.data?.data.map((g) => (
          <li key={g.name} className="font-mono">
            {g.name} <span className="text-zinc-600">{(g.hosts ?? []).join(", ")}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

"use client";
import type { SecretRequest } from "@prim/wire";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { formatRelative } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";

type Props = { workspace: string; primitive: string };

/**
 * Secret requests of agents waiting for an answer (`vault_request_secret`), each linked to its
 * page, so a person who did not get the agent's link finds them here. Nothing when there is none.
 */
export function VaultRequests(props: Props) {
  const trpc = useTRPC();
  const requests = useQuery({
    ...trpc.primitive.browse.queryOptions({ ...props, view: "vault.requests" }),
    select: (answer: unknown) => (answer as { data: SecretRequest[] }).data,
  });
  const list = requests.data;
  if (list === undefined || list.length === 0) return null;
  return (
    <section aria-labelledby="requests-title" className="grid gap-3">
      <h3 id="requests-title" className="font-semibold">
        Requests waiting for an answer
      </h3>
      <ul className="divide-y rounded-md border">
        {list.map((r) => (
          <li key={r.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 p-3 text-sm">
            <div className="grid min-w-0 flex-1 gap-1">
              <span className="break-all font-mono font-medium">{r.name}</span>
              <p className="line-clamp-2 break-words text-xs text-muted-foreground">
                <span className="break-all font-mono">{r.requested_by}</span>: “{r.reason}” · expires{" "}
                {formatRelative(r.expires_at)}
              </p>
            </div>
            <Link
              className="ml-auto text-sm font-medium underline underline-offset-4"
              href={`/w/${props.workspace}/secret-requests/${r.primitive}/${r.id}`}
              aria-label={`Answer the request for ${r.name}`}
            >
              Answer
            </Link>
          </li>
        ))}
      </ul>
    </section>
  );
}

"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { useTRPC } from "@/lib/trpc";

/**
 * "Allow secret export" (owners only): whether group archives may carry this workspace's vault
 * values sealed for another key (`prim pull`, `GET …/export?recipient=`). Off: archives keep
 * secret names, versions and grants, and the importer must set each value again.
 */
export function SecretExportPanel({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const setting = useQuery(trpc.settings.secretExport.queryOptions({ workspace }));
  const change = useMutation(
    trpc.settings.setSecretExport.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.settings.secretExport.queryKey({ workspace }) }),
    }),
  );
  return (
    <section aria-labelledby="secret-export-title" className="rounded-lg border bg-white p-4">
      <h2 id="secret-export-title" className="text-lg font-semibold">
        Secret export
      </h2>
      <ErrorText error={setting.error} prefix="Could not load the setting: " />
      <label className="mt-2 flex items-center gap-2 text-sm">
        <input
          type="checkbox"
          checked={setting.data?.enabled ?? false}
          disabled={setting.data === undefined || change.isPending}
          onChange={(event) => change.mutate({ workspace, enabled: event.target.checked })}
        />
        Allow group archives to carry vault values for another key
      </label>
      <p className="mt-1 text-sm text-zinc-600">
        Off (the default): an export for another key keeps secret names, versions and grants, without values. On: a
        workspace key or an owner may export values sealed for the recipient. Every switch and every export is in the
        audit log.
      </p>
      <ErrorText error={change.error} />
    </section>
  );
}

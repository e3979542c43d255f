"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ErrorText } from "@/components/status";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Switch } from "@/components/ui/switch";
import { toast } from "@/lib/toast";
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
      onSuccess: (_, input) => {
        toast.success(input.enabled ? "Secret export allowed" : "Secret export off");
        return queryClient.invalidateQueries({ queryKey: trpc.settings.secretExport.queryKey({ workspace }) });
      },
      onError: (error) => toast.error(`Not changed: ${error.message}`),
    }),
  );
  return (
    <Card>
      <CardHeader>
        <CardTitle id="secret-export-title">Secret export</CardTitle>
        <CardDescription>
          Off (the default): an export for another key keeps secret names, versions and grants, without values. On: a
          workspace key or an owner may export values sealed for the recipient. Every switch and every export is in the
          audit log.
        </CardDescription>
      </CardHeader>
      <CardContent className="space-y-2">
        <ErrorText error={setting.error} prefix="Could not load the setting: " />
        <div className="flex items-center gap-3">
          <Switch
            id="secret-export"
            checked={setting.data?.enabled ?? false}
            disabled={setting.data === undefined || change.isPending}
            onCheckedChange={(enabled) => change.mutate({ workspace, enabled })}
          />
          <label htmlFor="secret-export" className="text-sm">
            Allow group archives to carry vault values for another key
          </label>
        </div>
        <ErrorText error={change.error} />
      </CardContent>
    </Card>
  );
}

"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useId, useRef, useState } from "react";
import { ErrorText } from "@/components/status";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { NativeSelect } from "@/components/ui/native-select";
import { SubmitButton } from "@/components/ui/submit-button";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";

/** "kv, storage" → ["kv", "storage"]; nothing → undefined (every one). */
function listOf(text: FormDataEntryValue | null): string[] | undefined {
  const items = String(text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  return items.length === 0 ? undefined : items;
}

export interface CreatedWebhook {
  id: string;
  url: string;
  secret: string;
}

/**
 * A new endpoint: its URL, a group (every primitive of it) or one primitive of the group, an
 * optional filter (types, operations, key prefix) and a description. The cell makes it (its
 * secret sealed there) and answers the secret once.
 */
export function CreateWebhook({
  workspace,
  onCreated,
}: {
  workspace: string;
  onCreated: (made: CreatedWebhook) => void;
}) {
  const trpc = useTRPC();
  const ids = {
    url: useId(),
    group: useId(),
    primitive: useId(),
    types: useId(),
    ops: useId(),
    prefix: useId(),
    description: useId(),
  };
  const formRef = useRef<HTMLFormElement>(null);
  const [group, setGroup] = useState("");
  const groups = useQuery(trpc.data.groups.queryOptions({ workspace }));
  const chosen = group !== "" ? group : (groups.data?.[0]?.name ?? "");
  const primitives = useQuery({
    ...trpc.data.primitives.queryOptions({ workspace, group: chosen }),
    enabled: chosen !== "",
  });
  const create = useMutation(
    trpc.webhooks.create.mutationOptions({
      onSuccess: (made) => {
        formRef.current?.reset();
        toast.success("Webhook created");
        onCreated({ id: made.id, url: made.url, secret: made.secret });
      },
    }),
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const primitive = String(form.get("primitive") ?? "");
    const types = listOf(form.get("types"));
    const ops = listOf(form.get("ops"));
    const prefix = String(form.get("prefix") ?? "");
    const filter = { ...(types && { types }), ...(ops && { ops }), ...(prefix !== "" && { prefix }) };
    create.reset();
    create.mutate({
      workspace,
      url: String(form.get("url") ?? "").trim(),
      ...(primitive === "" ? { group: chosen } : { primitive }),
      ...(Object.keys(filter).length === 0 ? {} : { filter }),
      description: String(form.get("description") ?? "").trim() || undefined,
    });
  }
  const noGroup = groups.data !== undefined && groups.data.length === 0;
  return (
    <Card>
      <CardHeader>
        <CardTitle>Add an endpoint</CardTitle>
        <CardDescription>
          Changes made from now on are sent to it: keys, paths and ids, never values. Its signing secret is shown once.
        </CardDescription>
      </CardHeader>
      <CardContent>
        <form ref={formRef} onSubmit={submit} className="grid gap-4 md:grid-cols-2">
          <div className="grid gap-1.5 md:col-span-2">
            <Label htmlFor={ids.url}>Endpoint URL</Label>
            <Input
              id={ids.url}
              name="url"
              type="url"
              required
              maxLength={2048}
              placeholder="https://example.com/webhooks/prim"
            />
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={ids.group}>Group</Label>
            <NativeSelect id={ids.group} name="group" value={chosen} onChange={(e) => setGroup(e.target.value)}>
              {groups.data?.map((g) => (
                <option key={g.id} value={g.name}>
                  {g.name}
                </option>
              ))}
            </NativeSelect>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={ids.primitive}>Primitive</Label>
            <NativeSelect id={ids.primitive} name="primitive" defaultValue="" key={chosen}>
              <option value="">Every primitive of the group</option>
              {primitives.data?.data.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name} ({p.type})
                </option>
              ))}
            </NativeSelect>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={ids.types}>Types</Label>
            <Input id={ids.types} name="types" placeholder="Every type, or e.g. kv, storage" />
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={ids.ops}>Operations</Label>
            <Input id={ids.ops} name="ops" placeholder="Every operation, or e.g. set, delete" />
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={ids.prefix}>Key prefix</Label>
            <Input id={ids.prefix} name="prefix" maxLength={512} placeholder="Every key, path or id" />
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor={ids.description}>Description</Label>
            <Input id={ids.description} name="description" maxLength={200} placeholder="e.g. cache invalidation" />
          </div>
          <div className="flex flex-wrap items-center gap-3 md:col-span-2">
            <SubmitButton disabled={create.isPending || noGroup}>
              {create.isPending ? "Adding…" : "Add endpoint"}
            </SubmitButton>
            {noGroup && <p className="text-sm text-muted-foreground">Create a group on the Data page first.</p>}
          </div>
          <ErrorText error={create.error} className="md:col-span-2" />
          <ErrorText error={groups.error} prefix="Could not load the groups: " className="md:col-span-2" />
        </form>
      </CardContent>
    </Card>
  );
}

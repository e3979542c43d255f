"use client";
import type { SecretInfo, SecretListing } from "@prim/wire";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type RefObject, useId, useRef, useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { SubmitButton } from "@/components/ui/submit-button";
import { errorText } from "@/lib/errors";
import { formatDate, formatRelative } from "@/lib/format";
import { toast } from "@/lib/toast";
import { useTRPC } from "@/lib/trpc";
import { isAdmin, MONO_FIELD, useAct, useWorkspaceRole } from "./act";
import { VaultRequests } from "./vault-requests";
import { ListState, Pager, useCursorPages } from "./view-states";

type Props = { workspace: string; primitive: string };

/** The spec's secret names (an environment variable's shape): the engine checks them too. */
const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,62}$/;

/**
 * A vault: its secrets' names, versions and grants — never a value (no procedure answers one).
 * Owners and admins set a secret (the value typed into a password field, sent once, never shown
 * back, cleared after), rotate one (a new version under the same name) and delete one.
 */
export function VaultBrowser(props: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { role } = useWorkspaceRole(props.workspace);
  const admin = isAdmin(role);
  const pages = useCursorPages();
  const secrets = useQuery({
    ...trpc.primitive.browse.queryOptions({
      ...props,
      view: "vault.list",
      args: pages.cursor === undefined ? {} : { cursor: pages.cursor },
    }),
    select: (answer: unknown) => answer as { data: SecretListing[]; next_cursor: string | null },
  });
  const [name, setName] = useState("");
  const valueRef = useRef<HTMLInputElement>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.primitive.browse.pathKey() });
  const act = useAct(props.workspace, props.primitive);
  const list = secrets.data?.data;
  return (
    <div className="grid gap-6">
      <VaultRequests workspace={props.workspace} primitive={props.primitive} />
      {admin ? (
        <SecretForm
          act={act}
          name={name}
          setName={setName}
          valueRef={valueRef}
          exists={list?.some((s) => s.name === name) === true}
          onSaved={refresh}
        />
      ) : (
        role !== null && (
          <p className="rounded-md border bg-muted/50 p-3 text-sm text-muted-foreground">
            Setting, rotating and deleting secrets needs an owner or admin of the workspace. You see names, versions and
            grants; no one sees a value here.
          </p>
        )
      )}
      <section aria-labelledby="secrets-title" className="grid gap-3">
        <div className="flex flex-wrap items-baseline justify-between gap-2">
          <h3 id="secrets-title" className="font-semibold">
            Secrets
          </h3>
          <p className="text-xs text-muted-foreground">
            Names, versions and grants only: values never leave the vault.
          </p>
        </div>
        <ListState
          query={secrets}
          count={list?.length}
          label="secrets"
          empty={{
            title: "No secrets yet",
            description: admin
              ? "Set one above; agents then use it through fetch without ever reading it."
              : "An owner or admin sets secrets here or through the API.",
          }}
        />
        {list !== undefined && list.length > 0 && (
          <ul className="divide-y rounded-md border">
            {list.map((s) => (
              <SecretRow
                key={s.name}
                secret={s}
                admin={admin}
                onRotate={() => {
                  setName(s.name);
                  valueRef.current?.focus();
                }}
                onDelete={async () => {
                  try {
                    await act("vault.delete", { name: s.name });
                  } catch (error) {
                    toast.error(`Could not delete ${s.name}: ${errorText(error)}`);
                    throw new Error(errorText(error));
                  }
                  toast.success(`Deleted secret ${s.name}`);
                  await refresh();
                }}
              />
            ))}
          </ul>
        )}
        <Pager pages={pages} nextCursor={secrets.data?.next_cursor} label="Secrets" />
      </section>
    </div>
  );
}

function SecretRow(props: {
  secret: SecretListing;
  admin: boolean;
  onRotate: () => void;
  onDelete: () => Promise<void>;
}) {
  const { secret: s, admin } = props;
  const grant = s.grant;
  return (
    <li className="flex flex-wrap items-center gap-x-3 gap-y-2 p-3 text-sm">
      <div className="grid min-w-0 flex-1 gap-1">
        <div className="flex flex-wrap items-center gap-2">
          <span className="break-all font-mono font-medium">{s.name}</span>
          <Badge variant="secondary">v{s.version}</Badge>
          {s.needs_value && <Badge variant="warning">needs a value</Badge>}
        </div>
        <p className="text-xs text-muted-foreground">
          Updated <time dateTime={new Date(s.updated_at).toISOString()}>{formatRelative(s.updated_at)}</time>
          {" · "}
          {grant === null ? (
            "no grant: fetch refuses it until one is given"
          ) : (
            <>
              usable for <span className="break-words font-mono">{grant.hosts.join(", ")}</span>
              {grant.methods === null ? " (every method)" : ` (${grant.methods.join(", ")})`}
              {grant.expires_at !== null && `, until ${formatDate(grant.expires_at)}`}
            </>
          )}
        </p>
      </div>
      {admin && (
        <div className="ml-auto flex gap-2">
          <Button size="sm" variant="outline" aria-label={`Rotate ${s.name}`} onClick={props.onRotate}>
            Rotate
          </Button>
          <ConfirmDialog
            trigger={
              <Button size="sm" variant="outline" aria-label={`Delete ${s.name}`}>
                Delete
              </Button>
            }
            title={`Delete secret ${s.name}?`}
            description="Its value is gone for good and any agent fetching with it is refused from now on. Snapshots taken earlier still hold it."
            confirmLabel="Delete"
            typedName={s.name}
            onConfirm={props.onDelete}
          />
        </div>
      )}
    </li>
  );
}

/**
 * Set a secret, or rotate one (the same form on an existing name: a new version). The value
 * field is not bound to React state: its text is read once on submit and the field cleared.
 */
function SecretForm(props: {
  act: ReturnType<typeof useAct>;
  name: string;
  setName: (name: string) => void;
  valueRef: RefObject<HTMLInputElement | null>;
  exists: boolean;
  onSaved: () => unknown;
}) {
  const ids = { name: useId(), value: useId(), hint: useId() };
  const [nameError, setNameError] = useState<string | null>(null);
  const put = useMutation({
    mutationFn: (input: { name: string; value: string }) => props.act<SecretInfo>("vault.put", input),
    onSuccess: (info) => {
      toast.success(`Saved ${info.name} (version ${info.version})`);
      props.setName("");
      void props.onSaved();
    },
    onError: (error) => toast.error(`Could not save the secret: ${errorText(error)}`),
  });
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const field = props.valueRef.current;
    const value = field?.value ?? "";
    if (!SECRET_NAME.test(props.name)) {
      setNameError("Use A–Z, 0–9 and _, starting with a letter (at most 63 characters).");
      return;
    }
    setNameError(null);
    if (value === "") {
      field?.focus();
      return;
    }
    if (field !== null) field.value = ""; // cleared at once: the value lives only in the request
    put.mutate({ name: props.name, value });
  }
  return (
    <Card>
      <CardHeader>
        <CardTitle className="text-base">{props.exists ? `Rotate ${props.name}` : "Set a secret"}</CardTitle>
        <CardDescription>
          The value is sent once and never shown again. Saving an existing name rotates it: a new version replaces the
          old value.
        </CardDescription>
      </CardHeader>
      <CardContent>
        <form onSubmit={submit} className="grid gap-4 sm:grid-cols-[minmax(0,1fr)_minmax(0,1fr)_auto] sm:items-start">
          <div className="grid gap-2">
            <Label htmlFor={ids.name}>Secret name</Label>
            <Input
              id={ids.name}
              value={props.name}
              onChange={(e) => props.setName(e.target.value.toUpperCase())}
              placeholder="OPENAI_API_KEY"
              autoComplete="off"
              spellCheck={false}
              required
              aria-invalid={nameError !== null}
              aria-describedby={ids.hint}
              className={MONO_FIELD}
            />
            <p
              id={ids.hint}
              className={nameError === null ? "text-xs text-muted-foreground" : "text-xs text-destructive"}
            >
              {nameError ?? "A–Z, 0–9 and _, starting with a letter."}
            </p>
          </div>
          <div className="grid gap-2">
            <Label htmlFor={ids.value}>Value</Label>
            <Input
              id={ids.value}
              ref={props.valueRef}
              type="password"
              name="secret-value"
              autoComplete="new-password"
              spellCheck={false}
              required
            />
          </div>
          <div className="flex flex-wrap gap-2 sm:mt-[1.6875rem]">
            <SubmitButton disabled={put.isPending} aria-busy={put.isPending}>
              {put.isPending ? "Saving…" : props.exists ? "Save new version" : "Save secret"}
            </SubmitButton>
            {props.exists && !put.isPending && (
              <Button variant="ghost" onClick={() => props.setName("")}>
                Cancel
              </Button>
            )}
          </div>
        </form>
      </CardContent>
    </Card>
  );
}

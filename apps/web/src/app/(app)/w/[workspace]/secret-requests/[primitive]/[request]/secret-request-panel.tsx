"use client";
import type { SecretRequest } from "@prim/wire";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useRef } from "react";
import { ErrorText } from "@/components/status";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Skeleton } from "@/components/ui/skeleton";
import { SubmitButton } from "@/components/ui/submit-button";
import { formatDate, formatRelative } from "@/lib/format";
import { useTRPC } from "@/lib/trpc";
import { isAdmin, MONO_FIELD, useWorkspaceRole } from "../../../data/browsers/act";

type Props = { workspace: string; primitive: string; request: string };

const STATUS_TEXT: Record<SecretRequest["status"], string> = {
  pending: "Waiting for an answer",
  set: "Set",
  declined: "Declined",
  expired: "Expired",
};

/**
 * Who asked, for which secret, why (the agent's words, shown as text) and with which grant; an
 * owner or admin types the value (a password field, cleared after) and sets it, or declines.
 * Answered or expired requests show what happened, with no form.
 */
export function SecretRequestPanel(props: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { role } = useWorkspaceRole(props.workspace);
  const query = useQuery(trpc.secretRequest.get.queryOptions(props));
  const valueRef = useRef<HTMLInputElement>(null);
  const valueId = useId();
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.secretRequest.get.queryKey(props) });
  const set = useMutation(trpc.secretRequest.set.mutationOptions({ onSettled: refresh }));
  const decline = useMutation(trpc.secretRequest.decline.mutationOptions({ onSettled: refresh }));

  if (query.isPending) return <Skeleton className="h-64" />;
  if (query.isError) return <ErrorText error={query.error} prefix="Could not load the request: " />;
  const { request, vault, askedBy } = query.data;
  const pending = request.status === "pending";
  const busy = set.isPending || decline.isPending;

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const input = valueRef.current;
    if (input === null || input.value === "") return;
    const value = input.value;
    input.value = ""; // never kept in the page once sent
    set.mutate({ ...props, value });
  };

  return (
    <Card>
      <CardHeader>
        <div className="flex flex-wrap items-center justify-between gap-2">
          <CardTitle className={`${MONO_FIELD} break-all text-base`}>{request.name}</CardTitle>
          <Badge variant={pending ? "secondary" : request.status === "set" ? "success" : "outline"}>
            {STATUS_TEXT[request.status]}
          </Badge>
        </div>
        <CardDescription>
          In vault <span className={MONO_FIELD}>{vault.name}</span> of group{" "}
          <span className={MONO_FIELD}>{vault.group}</span>
        </CardDescription>
      </CardHeader>
      <CardContent className="grid gap-4 text-sm">
        <dl className="grid gap-3">
          <div>
            <dt className="font-medium">Asked by</dt>
            {askedBy === null || askedBy.kind === "unknown" ? (
              <dd className={`${MONO_FIELD} break-all text-muted-foreground`}>{request.requested_by}</dd>
            ) : (
              <dd className="break-words text-muted-foreground">
                {askedBy.label}
                {askedBy.detail === null ? null : <span className={`${MONO_FIELD} ml-2`}>{askedBy.detail}</span>}
                {askedBy.gone ? " (no longer exists)" : null}
              </dd>
            )}
          </div>
          <div>
            <dt className="font-medium">Its reason (the agent&apos;s words, not ours)</dt>
            <dd>
              <blockquote className="mt-1 whitespace-pre-wrap break-words border-l-2 pl-3 text-muted-foreground">
                {request.reason}
              </blockquote>
            </dd>
          </div>
          <div>
            <dt className="font-medium">Where it may be sent</dt>
            <dd className="text-muted-foreground">
              {request.allow === null ? (
                "No grant proposed: an owner or admin grants hosts before it can be used."
              ) : (
                <>
                  <span className={`${MONO_FIELD} break-all`}>{request.allow.hosts.join(", ")}</span>
                  {request.allow.methods === null ? " (any method)" : ` (${request.allow.methods.join(", ")})`}
                </>
              )}
            </dd>
          </div>
          <div>
            <dt className="font-medium">{pending ? "Expires" : "Asked"}</dt>
            <dd className="text-muted-foreground">
              {pending
                ? `${formatRelative(request.expires_at)} (${formatDate(request.expires_at)})`
                : formatDate(request.created_at)}
            </dd>
          </div>
        </dl>
        {!pending && (
          <p role="status" className="rounded-md border bg-muted/50 p-3">
            {request.status === "set"
              ? `${request.name} is set (version ${request.version ?? "?"}). The agent was told it is set; you can close this tab.`
              : request.status === "declined"
                ? "Declined: nothing was stored."
                : "This request expired without an answer; the agent can ask again."}
          </p>
        )}
        {pending && !isAdmin(role) && role !== null && (
          <p className="rounded-md border bg-muted/50 p-3 text-muted-foreground">
            Setting a secret needs an owner or admin of the workspace: share this page with one.
          </p>
        )}
        {pending && isAdmin(role) && (
          <form id="secret-request-form" onSubmit={onSubmit} className="grid gap-2" autoComplete="off">
            <Label htmlFor={valueId}>Value of {request.name}</Label>
            <Input
              id={valueId}
              ref={valueRef}
              name="value"
              type="password"
              autoComplete="off"
              spellCheck={false}
              required
              className={MONO_FIELD}
            />
            <p className="text-xs text-muted-foreground">
              Only set it if you expected this request. It is stored encrypted; no page or agent shows it again.
            </p>
            <ErrorText error={set.error ?? decline.error} />
          </form>
        )}
      </CardContent>
      {pending && isAdmin(role) && (
        <CardFooter className="flex flex-wrap justify-end gap-2">
          <Button variant="outline" disabled={busy} onClick={() => decline.mutate(props)}>
            Decline
          </Button>
          <SubmitButton form="secret-request-form" disabled={busy}>
            {set.isPending ? "Setting…" : "Set secret"}
          </SubmitButton>
        </CardFooter>
      )}
    </Card>
  );
}

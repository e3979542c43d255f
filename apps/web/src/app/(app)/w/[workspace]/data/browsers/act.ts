"use client";
import { useQuery } from "@tanstack/react-query";
import { useCallback } from "react";
import { useTRPC, useTRPCClient } from "@/lib/trpc";
import type { Action } from "@/server/trpc/routers/primitive";

/**
 * What the vault, memory and db browsers share: calling an engine operation of `primitive.act`
 * (its answer typed by the caller) and the caller's role in the workspace (to offer only what it may do; the engine decides anyway).
 */
export function useAct(workspace: string, primitive: string) {
  const client = useTRPCClient();
  return useCallback(
    <T>(op: Action, args: Record<string, unknown> = {}) =>
      client.primitive.act.mutate({ workspace, primitive, op, args }) as Promise<T>,
    [client, workspace, primitive],
  );
}

/** The query key under which a browser caches its act reads (invalidated after its changes). */
export const actKey = (primitive: string, ...rest: unknown[]) => ["prim-act", primitive, ...rest];

export type Role = "owner" | "admin" | "member" | "billing";

/** The signed-in user's role (and plan) in `workspace`, from the workspace list (cached). */
export function useWorkspaceRole(workspace: string): { role: Role | null; plan: string | null } {
  const trpc = useTRPC();
  const list = useQuery(trpc.workspace.list.queryOptions());
  const mine = list.data?.find((w) => w.id === workspace);
  return { role: (mine?.role as Role | undefined) ?? null, plan: mine?.plan ?? null };
}

export const isAdmin = (role: Role | null) => role === "owner" || role === "admin";

/** A monospace field's classes (13 px: the console's and the forms' density). */
export const MONO_FIELD = "font-mono text-[13px]";

"use client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import type { AppRouter } from "@/server/trpc/router";

/**
 * The dashboard's procedures in React: `useTRPC()` gives query and mutation options,
 * `useTRPCClient()` the client itself (for a read made through a mutation, as `primitive.act`).
 */
export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

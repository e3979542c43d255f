"use client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import type { AppRouter } from "@/server/trpc/router";

/** The dashboard's procedures in React: `useTRPC()` gives query and mutation options. */
export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

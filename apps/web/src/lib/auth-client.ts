"use client";
import { createAuthClient } from "better-auth/react";

/** The browser's side of the session library (same origin: `/api/auth/*`). */
export const authClient = createAuthClient();

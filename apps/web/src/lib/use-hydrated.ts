"use client";
import { useSyncExternalStore } from "react";

const never = () => () => {};

/**
 * False until React has hydrated the page. A form's submit button stays disabled until then: a
 * click before would submit the form natively instead of through its handler (and a password
 * form would put the password in the address). A component first rendered on the client (not
 * hydrated) is true at once, with no second render.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    never,
    () => true,
    () => false,
  );
}

"use client";
import { useEffect, useState } from "react";

/**
 * False until React has hydrated the page. A form's submit button stays disabled until then: a
 * click before would submit the form natively instead of through its handler (and a password
 * form would put the password in the address).
 */
export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}

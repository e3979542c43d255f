"use client";
import { useCallback, useEffect, useState } from "react";

/** Most statements kept per primitive. */
const KEEP = 50;
const keyOf = (primitive: string) => `prim:sql-history:${primitive}`;

function read(primitive: string): string[] {
  try {
    const parsed: unknown = JSON.parse(window.localStorage.getItem(keyOf(primitive)) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((s): s is string => typeof s === "string").slice(0, KEEP) : [];
  } catch {
    return [];
  }
}

/**
 * The SQL run in this browser on one primitive, newest first, kept in localStorage (per
 * primitive id; a repeated text moves to the top instead of appearing twice).
 */
export function useSqlHistory(primitive: string) {
  const [entries, setEntries] = useState<string[]>([]);
  useEffect(() => setEntries(read(primitive)), [primitive]);
  const add = useCallback(
    (sql: string) => {
      const next = [sql, ...read(primitive).filter((s) => s !== sql)].slice(0, KEEP);
      try {
        window.localStorage.setItem(keyOf(primitive), JSON.stringify(next));
      } catch {
        // storage full or disabled: the history lives for this page only
      }
      setEntries(next);
    },
    [primitive],
  );
  const clear = useCallback(() => {
    try {
      window.localStorage.removeItem(keyOf(primitive));
    } catch {
      // nothing to clear
    }
    setEntries([]);
  }, [primitive]);
  return { entries, add, clear };
}

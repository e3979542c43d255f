/**
 * Stripe's request encoding (application/x-www-form-urlencoded with brackets, as the SDK sends
 * it): `a[b][0][c]=v` → `{ a: { b: [{ c: "v" }] } }`. Every leaf stays a string.
 */
export function parseForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, "").split("[");
    let node: Record<string, unknown> = root;
    for (let i = 0; i < path.length; i++) {
      const part = path[i] as string;
      if (i === path.length - 1) {
        if (part === "" && Array.isArray(node)) (node as unknown[]).push(value);
        else node[part] = value;
        break;
      }
      const next = path[i + 1] as string;
      node[part] ??= next === "" || /^\d+$/.test(next) ? [] : {};
      node = node[part] as Record<string, unknown>;
    }
  }
  return arrays(root) as Record<string, unknown>;
}

/** Objects whose keys are all indexes become arrays (in index order); `a[]=x` pushes. */
function arrays(value: unknown): unknown {
  if (Array.isArray(value)) {
    const entries = Object.entries(value as unknown as Record<string, unknown>);
    return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => arrays(v));
  }
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, arrays(v)]));
  }
  return value;
}

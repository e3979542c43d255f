import { WORKSPACE_TAG_PATTERN } from "@prim/wire";

/*
 * HAProxy in front of the cells (issue 43, "Routing at the edge"): the generated haproxy.cfg.
 * One backend per cell (its public api listener), a map file workspace tag → backend, the tag
 * read from `Authorization: Bearer pk_<tag>_…` / `po_<tag>_…` / `pa_<tag>_…` or from a signed URL's token
 * (`/v1/signed/<base64url JSON>.<mac>`, whose `w` names the workspace), and a fallback backend
 * (round robin over every cell, which forwards in Node as without the edge) for a request
 * without a tag or with one the map does not hold. The map is kept by `EdgeMapWatcher` over the
 * runtime API (the stats socket, level admin). A stale map costs a Node hop, never a wrong
 * answer: the cell that gets it forwards to the owner (PlacementRouter).
 */

export interface EdgeCell {
  id: string;
  /** The cell's public api listener, `http://host:port`. */
  url: string;
}

export interface EdgeConfigOptions {
  /** Where the edge listens (the public api port). */
  bind: { host: string; port: number };
  cells: readonly EdgeCell[];
  /** The map file, read at start (`mapFileText`), then changed over the runtime API. */
  mapFile: string;
  /** The runtime API's unix socket (`stats socket … level admin`). */
  socket: string;
  /** HAProxy's threads (default 1: on a small machine the cells need the cores). */
  threads?: number;
  /** Connections per server at most (default 1000). */
  maxconn?: number;
}

export const FALLBACK_BACKEND = "fallback";

/** The backend of `cell`: `cell_` and its id with anything outside [A-Za-z0-9_.-] made `_`. */
export function backendName(cell: string): string {
  return `cell_${cell.replace(/[^A-Za-z0-9_.-]/g, "_")}`;
}

/** The map file's text: one `<tag> <backend>` line per placed workspace. */
export function mapFileText(entries: Iterable<{ tag: string; cell: string }>): string {
  let text = "";
  for (const { tag, cell } of entries) text += `${tag} ${backendName(cell)}\n`;
  return text;
}

function server(cell: EdgeCell, maxconn: number): string {
  const { hostname, port } = new URL(cell.url);
  const host = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  return `server ${cell.id.replace(/[^A-Za-z0-9_.-]/g, "_")} ${host.includes(":") ? `[${host}]` : host}:${port} maxconn ${maxconn}`;
}

export function haproxyConfig(options: EdgeConfigOptions): string {
  const maxconn = options.maxconn ?? 1000;
  const tag = WORKSPACE_TAG_PATTERN;
  // Checked whole by a regex ACL; then cut by `field` (a capture group would need parentheses
  // inside a converter's arguments, which its parser ends at).
  // The scheme is case-insensitive (RFC 9110 §11.1); the credential is not.
  const bearer = `^[Bb][Ee][Aa][Rr][Ee][Rr] +p[koa]_${tag}_[A-Za-z0-9_.-]+$`;
  const signed = "^/v1/signed/[A-Za-z0-9_-]+[.][A-Za-z0-9_-]+$";
  const lines = [
    "global",
    `  nbthread ${options.threads ?? 1}`,
    `  maxconn ${maxconn * Math.max(1, options.cells.length) + 100}`,
    `  stats socket ${options.socket} mode 600 level admin`,
    "",
    "defaults",
    "  mode http",
    "  option http-keep-alive",
    "  http-reuse always",
    // The client's address for the cells (ip_allow, signed URLs' per-IP limits): the last
    // X-Forwarded-For value is HAProxy's own; the cells read it with PRIM_CLIENT_IP_HEADER.
    "  option forwardfor",
    "  timeout connect 5s",
    "  timeout client 75s",
    "  timeout server 75s",
    "  timeout http-request 30s",
    "  timeout http-keep-alive 10s",
    // Change feeds' SSE and long polls: the tunnel outlives the server timeout.
    "  timeout tunnel 1h",
    "",
    "frontend api",
    `  bind ${options.bind.host.includes(":") ? `[${options.bind.host}]` : options.bind.host}:${options.bind.port}`,
    // The tag is a routing hint: the cell verifies the whole credential (a forged tag is 401 there).
    `  http-request set-var(txn.tag) req.hdr(authorization),field(2,_) if { req.hdr(authorization) -m reg '${bearer}' }`,
    `  http-request set-var(txn.tag) path,field(4,/),field(1,.),ub64dec,json_query('$.w'),field(2,_) if { path -m reg '${signed}' }`,
    `  use_backend %[var(txn.tag),map(${options.mapFile},${FALLBACK_BACKEND})] if { var(txn.tag) -m found }`,
    `  default_backend ${FALLBACK_BACKEND}`,
    // Which backend took it (the map's choice, or the fallback): for tests and operators.
    "  http-response set-header X-Prim-Edge %b",
    "",
  ];
  for (const cell of options.cells) {
    lines.push(`backend ${backendName(cell.id)}`, `  ${server(cell, maxconn)}`, "");
  }
  lines.push(`backend ${FALLBACK_BACKEND}`, "  balance roundrobin");
  for (const cell of options.cells) lines.push(`  ${server(cell, maxconn)}`);
  lines.push("");
  return lines.join("\n");
}

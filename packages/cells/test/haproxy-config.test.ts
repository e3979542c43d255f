import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HAPROXY_BIN } from "../src/edge/edge-process.js";
import { backendName, FALLBACK_BACKEND, haproxyConfig, mapFileText } from "../src/edge/haproxy-config.js";

const dir = mkdtempSync(join(tmpdir(), "prim-haproxy-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const options = {
  bind: { host: "127.0.0.1", port: 8787 },
  cells: [
    { id: "cell-a", url: "http://127.0.0.1:41001" },
    { id: "cell-b", url: "http://[::1]:41002" },
  ],
  mapFile: join(dir, "workspaces.map"),
  socket: join(dir, "runtime.sock"),
};

describe("the generated haproxy.cfg", () => {
  it("has a backend per cell, the fallback over all of them, the map lookup and the admin socket", () => {
    const cfg = haproxyConfig(options);
    expect(cfg).toContain(`backend ${backendName("cell-a")}\n  server cell-a 127.0.0.1:41001`);
    expect(cfg).toContain(`backend ${backendName("cell-b")}\n  server cell-b [::1]:41002`);
    expect(cfg).toMatch(/backend fallback\n {2}balance roundrobin\n {2}server cell-a .*\n {2}server cell-b /);
    expect(cfg).toContain(`map(${options.mapFile},${FALLBACK_BACKEND})`);
    expect(cfg).toContain(`stats socket ${options.socket} mode 600 level admin`);
    for (const line of [
      "option http-keep-alive",
      "http-reuse always",
      "option forwardfor",
      `default_backend ${FALLBACK_BACKEND}`,
    ]) {
      expect(cfg).toContain(line);
    }
    expect(mapFileText([{ tag: "01jz8x4k2m5n6p7q8r9s0t1v2w", cell: "cell-b" }])).toBe(
      "01jz8x4k2m5n6p7q8r9s0t1v2w cell_cell-b\n",
    );
  });

  it("is valid for HAProxy itself (haproxy -c; CI installs Debian's haproxy)", () => {
    expect(existsSync(HAPROXY_BIN), `${HAPROXY_BIN} is missing: apt-get install haproxy`).toBe(true);
    const file = join(dir, "haproxy.cfg");
    writeFileSync(options.mapFile, "");
    writeFileSync(file, haproxyConfig(options));
    const checked = spawnSync(HAPROXY_BIN, ["-c", "-f", file], { encoding: "utf8" });
    expect(checked.status, checked.stderr).toBe(0);
  });
});

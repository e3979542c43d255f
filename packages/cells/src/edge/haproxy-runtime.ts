import { createConnection } from "node:net";

/**
 * HAProxy's runtime API over its unix socket (`stats socket … level admin`): one command per
 * connection (the non-interactive mode: HAProxy answers and closes), the answer's text.
 */
export class HaproxyRuntime {
  constructor(private readonly socket: string) {}

  command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const conn = createConnection(this.socket);
      let answer = "";
      conn.setEncoding("utf8");
      conn.on("data", (chunk: string) => {
        answer += chunk;
      });
      conn.on("error", reject);
      conn.on("close", () => resolve(answer.trim()));
      conn.end(line.endsWith("\n") ? line : `${line}\n`);
    });
  }

  /** Points `key` at `value` (`set map`, else `add map` when the key is new). */
  async setMap(file: string, key: string, value: string): Promise<void> {
    const answer = await this.command(`set map ${file} ${key} ${value}`);
    if (answer === "") return;
    if (!/not found/i.test(answer)) throw new Error(`haproxy: set map ${key}: ${answer}`);
    const added = await this.command(`add map ${file} ${key} ${value}`);
    if (added !== "") throw new Error(`haproxy: add map ${key}: ${added}`);
  }

  /** Drops `key` (absent already is fine). */
  async delMap(file: string, key: string): Promise<void> {
    const answer = await this.command(`del map ${file} ${key}`);
    if (answer !== "" && !/not found/i.test(answer)) throw new Error(`haproxy: del map ${key}: ${answer}`);
  }

  /** Replaces the whole map at once: a new version filled, then committed (atomic for lookups). */
  async replaceMap(file: string, entries: readonly (readonly [string, string])[]): Promise<void> {
    const prepared = await this.command(`prepare map ${file}`);
    const version = /version created: (\d+)/i.exec(prepared)?.[1];
    if (version === undefined) throw new Error(`haproxy: prepare map: ${prepared}`);
    // Batches, each a payload of `key value` lines.
    for (let i = 0; i < entries.length; i += 1000) {
      const lines = entries
        .slice(i, i + 1000)
        .map(([k, v]) => `${k} ${v}\n`)
        .join("");
      const answer = await this.command(`add map @${version} ${file} <<\n${lines}\n`);
      if (answer !== "") throw new Error(`haproxy: add map @${version}: ${answer}`);
    }
    const committed = await this.command(`commit map @${version} ${file}`);
    if (committed !== "") throw new Error(`haproxy: commit map @${version}: ${committed}`);
  }

  /** The map as HAProxy holds it: key → value. */
  async showMap(file: string): Promise<Map<string, string>> {
    const text = await this.command(`show map ${file}`);
    const out = new Map<string, string>();
    for (const line of text.split("\n")) {
      const [, key, value] = line.trim().split(/\s+/);
      if (key !== undefined && value !== undefined) out.set(key, value);
    }
    return out;
  }
}

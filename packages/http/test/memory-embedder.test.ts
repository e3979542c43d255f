import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { embedderFromSettings, OpenAiEmbedder } from "@prim/engine";
import { afterEach, describe, expect, it } from "vitest";
import { withEmbeddedMemory, withMemory } from "./memory-helpers.js";

// Words that mean the same thing share a dimension, so paraphrases with no word in common get
// close vectors — what a real embedding model does, small enough to reason about.
const CONCEPTS: string[][] = [
  ["car", "automobile", "vehicle"],
  ["maintenance", "service", "upkeep", "repair", "servicing"],
  ["tyres", "tires", "wheels"],
  ["winter", "snow", "cold"],
  ["coffee", "espresso"],
  ["meeting", "sync", "standup"],
];
const DIMS = 32;

function embed(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const concept = CONCEPTS.findIndex((c) => c.includes(word));
    let dim = concept;
    if (concept === -1) {
      let h = 0;
      for (const ch of word) h = (h * 31 + ch.charCodeAt(0)) % 1_000_003;
      dim = CONCEPTS.length + (h % (DIMS - CONCEPTS.length));
    }
    v[dim] = (v[dim] as number) + 1;
  }
  return v;
}

interface Seen {
  model: string;
  input: string[];
  authorization: string | undefined;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

/** An OpenAI-compatible embeddings endpoint on 127.0.0.1; `fail` makes it answer 500. */
async function embeddingsServer(options: { fail?: boolean } = {}) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const parsed = JSON.parse(body) as { model: string; input: string[] };
      seen.push({ ...parsed, authorization: req.headers.authorization });
      if (options.fail || req.url !== "/v1/embeddings") {
        res.writeHead(options.fail ? 500 : 404).end();
        return;
      }
      const data = parsed.input.map((text, index) => ({ object: "embedding", index, embedding: embed(text) }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data, model: parsed.model }));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`;
  return { url, seen };
}

const NOTES = [
  "The car needs new tyres before winter.",
  "Alice drinks her espresso without sugar.",
  "The standup is at 9:30 every weekday.",
  "Invoices are generated on the first of the month.",
];

describe("memory: embeddings signal", () => {
  it("finds a paraphrase with no word in common, which lexical recall cannot", async () => {
    const endpoint = await embeddingsServer();
    const embedder = new OpenAiEmbedder({ url: endpoint.url, model: "test-embed", apiKey: "sk-test" });
    const withVectors = await withEmbeddedMemory(embedder);
    const lexicalOnly = await withMemory();
    for (const text of NOTES) {
      expect((await withVectors.remember({ kind: "fact", text })).status).toBe(201);
      await lexicalOnly.remember({ kind: "fact", text });
    }
    const query = "automobile upkeep";
    const hits = (await withVectors.recall({ query })).body.data;
    expect(hits[0].text).toBe("The car needs new tyres before winter.");
    expect(hits[0].score).toBeGreaterThan(0);
    expect(hits[0].score).toBeLessThanOrEqual(1);
    expect((await lexicalOnly.recall({ query })).body.data).toEqual([]);
    // Lexical matches still count: a shared word and a shared meaning agree.
    expect((await withVectors.recallTexts({ query: "coffee" }))[0]).toBe("Alice drinks her espresso without sugar.");
  });

  it("sends the model, the key and one text per call to the configured endpoint", async () => {
    const endpoint = await embeddingsServer();
    const server = await withEmbeddedMemory(new OpenAiEmbedder({ url: endpoint.url, model: "m-1", apiKey: "k-9" }));
    await server.remember({ kind: "fact", text: NOTES[0] as string });
    await server.recall({ query: "winter tyres" });
    expect(endpoint.seen).toEqual([
      { model: "m-1", input: [NOTES[0]], authorization: "Bearer k-9" },
      { model: "m-1", input: ["winter tyres"], authorization: "Bearer k-9" },
    ]);
  });

  it("keeps working when the endpoint fails: memories are stored, recall ranks lexically", async () => {
    const endpoint = await embeddingsServer({ fail: true });
    const server = await withEmbeddedMemory(new OpenAiEmbedder({ url: endpoint.url, model: "m" }));
    const res = await server.remember({ kind: "fact", text: NOTES[0] as string });
    expect(res.status).toBe(201);
    expect(await server.recallTexts({ query: "car tyres" })).toEqual([NOTES[0]]);
    expect(endpoint.seen).toHaveLength(2);
    await server.engine.services.audit.flush();
    const entries = await server.engine.services.catalog.listAudit({ group: "app", limit: 10 });
    expect(entries.find((e) => e.action === "memory.remember")?.detail).toEqual({ kind: "fact", embedded: false });
  });

  it("is off unless a URL is configured", () => {
    expect(embedderFromSettings({})).toBeUndefined();
    expect(embedderFromSettings({ url: "", model: "m" })).toBeUndefined();
    expect(embedderFromSettings({ url: "http://127.0.0.1:1/v1/embeddings" })).toBeInstanceOf(OpenAiEmbedder);
  });
});

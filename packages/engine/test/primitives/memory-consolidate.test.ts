import { describe, expect, it } from "vitest";
import { type ClusterMember, findClusters, similarity } from "../../src/primitives/memory/consolidate.js";
import { lightStem } from "../../src/primitives/memory/text.js";

/** Clusters by comparing every pair: what prefix filtering must reproduce exactly. */
function bruteForce(members: ClusterMember[], threshold: number): string[][] {
  const parent = members.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : find(parent[i] as number));
  members.forEach((a, i) => {
    members.forEach((b, j) => {
      if (j <= i || a.kind !== b.kind || a.owner !== b.owner) return;
      if (similarity(a.text, b.text) >= threshold - 1e-9) parent[find(j)] = find(i);
    });
  });
  const groups = new Map<number, string[]>();
  members.forEach((m, i) => {
    groups.set(find(i), [...(groups.get(find(i)) ?? []), m.id]);
  });
  return [...groups.values()].filter((g) => g.length > 1).map((g) => g.sort());
}

function randomMembers(count: number, seed: number): ClusterMember[] {
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const words = "deploy staging cluster billing invoice refund coffee editor dark light mode alice bob friday".split(
    " ",
  );
  return Array.from({ length: count }, (_, i) => {
    const length = 2 + Math.floor(random() * 5);
    const text = Array.from({ length }, () => words[Math.floor(random() * words.length)]).join(" ");
    return {
      seq: i + 1,
      id: `m${String(i).padStart(3, "0")}`,
      kind: random() < 0.8 ? "fact" : "note",
      owner: null,
      text,
    };
  });
}

describe("memory consolidate: clustering", () => {
  it("finds exactly the clusters an all-pairs comparison finds, at every threshold", () => {
    for (const seed of [1, 2, 3]) {
      const members = randomMembers(150, seed);
      for (const threshold of [0.5, 0.6, 0.75, 0.8, 1]) {
        const fast = findClusters(members, threshold).map((c) => [c.keeper, ...c.others].map((m) => m.id).sort());
        expect(fast.sort(), `seed ${seed} threshold ${threshold}`).toEqual(bruteForce(members, threshold).sort());
      }
    }
  });

  it("keeps the newest member and lists the others oldest first", () => {
    const members: ClusterMember[] = [3, 1, 2].map((seq) => ({
      seq,
      id: `m${seq}`,
      kind: "fact",
      owner: "alice",
      text: "Alice prefers dark mode.",
    }));
    const [cluster] = findClusters(members, 0.8);
    expect(cluster?.keeper.id).toBe("m3");
    expect(cluster?.others.map((m) => m.id)).toEqual(["m1", "m2"]);
  });
});

describe("memory consolidate: similarity scale", () => {
  it("is 1 for the same words in any order or form, and drops with a changed content word", () => {
    expect(similarity("Alice prefers dark mode in the editor.", "In her editors, Alice preferred DARK mode!")).toBe(1);
    expect(similarity("Deploys happen on Fridays", "Deploys never happen on Fridays")).toBeCloseTo(0.75);
    expect(similarity("Invoices are stored in PostgreSQL.", "Invoices are stored in MySQL.")).toBeCloseTo(0.5);
    expect(similarity("!!!", "!!!")).toBe(1);
    expect(similarity("", "x")).toBe(0);
  });

  it("stems word forms together and keeps different words apart", () => {
    const same = [
      ["prefers", "preferred"],
      ["store", "stored"],
      ["deploying", "deployment"],
      ["invoices", "invoice"],
      ["running", "runs"],
    ];
    for (const [a, b] of same) expect(lightStem(a as string), `${a}/${b}`).toBe(lightStem(b as string));
    for (const [a, b] of [
      ["contract", "contrast"],
      ["mode", "model"],
    ]) {
      expect(lightStem(a as string)).not.toBe(lightStem(b as string));
    }
  });
});

// Near-duplicate detection for consolidate.
//
// Similarity of two texts is the Jaccard index of their content words, lightly stemmed
// (`stemSet`): shared words / all words, on a 0..1 scale. 1 for the same words in any order,
// case, punctuation or word form; changing one content word of a five-word memory drops it to
// 4/6 ≈ 0.67, so "happens on Fridays" and "never happens on Fridays", or PostgreSQL and MySQL in
// the same sentence, stay apart at the default 0.8. Texts equal once reduced to their words
// always match.
//
// Pairs are found with prefix filtering, which is exact: words are ordered rarest first, and
// two sets with Jaccard ≥ t must share one of the first |x| − ⌈t·|x|⌉ + 1 words of each, so
// only texts sharing such a (rare) word are compared — rather than every pair.
import { normalizedText, stemSet } from "./text.js";

export interface ClusterMember {
  seq: number;
  id: string;
  kind: string;
  owner: string | null;
  text: string;
}

export interface Cluster {
  /** The newest member, which supersedes the others. */
  keeper: ClusterMember;
  /** The other members, oldest first. */
  others: ClusterMember[];
}

/** The similarity consolidate uses (0..1), for two texts. */
export function similarity(a: string, b: string): number {
  if (normalizedText(a) === normalizedText(b)) return 1;
  return jaccard(stemSet(a), stemSet(b));
}

function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Union-find over member indices; the root of a set is its smallest index. */
class DisjointSets {
  private readonly parent: Int32Array;

  constructor(size: number) {
    this.parent = Int32Array.from({ length: size }, (_, i) => i);
  }

  find(i: number): number {
    let root = i;
    while (this.parent[root] !== root) root = this.parent[root] as number;
    let node = i;
    while (node !== root) {
      const next = this.parent[node] as number;
      this.parent[node] = root;
      node = next;
    }
    return root;
  }

  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra < rb) this.parent[rb] = ra;
    else if (rb < ra) this.parent[ra] = rb;
  }
}

/**
 * Clusters of near-duplicates among `members` (live memories), within each (kind, owner):
 * connected components of the "similarity ≥ threshold" relation. Deterministic: the result
 * depends only on the members, not on their order.
 */
export function findClusters(members: readonly ClusterMember[], threshold: number): Cluster[] {
  const groups = new Map<string, ClusterMember[]>();
  for (const m of members) {
    const key = JSON.stringify([m.kind, m.owner]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [m]);
    else group.push(m);
  }
  const clusters: Cluster[] = [];
  for (const group of groups.values()) {
    group.sort((a, b) => a.seq - b.seq);
    clusters.push(...clustersOf(group, threshold));
  }
  return clusters.sort((a, b) => a.keeper.seq - b.keeper.seq);
}

function clustersOf(group: ClusterMember[], threshold: number): Cluster[] {
  const groups = new DisjointSets(group.length);
  // Texts equal once reduced to their words: always duplicates.
  const firstByText = new Map<string, number>();
  group.forEach((m, i) => {
    const key = normalizedText(m.text);
    const first = firstByText.get(key);
    if (first === undefined) firstByText.set(key, i);
    else groups.union(first, i);
  });
  const sets = group.map((m) => stemSet(m.text));
  const orders = rarestFirst(sets);
  // Each set's prefix words point to the sets holding them (only prefix words are indexed:
  // both members of a matching pair have a shared word in their prefixes).
  const postings = new Map<string, number[]>();
  const seen = new Int32Array(group.length).fill(-1);
  orders.forEach((words, i) => {
    const prefix = words.length - Math.ceil(threshold * words.length) + 1;
    for (const word of words.slice(0, Math.max(0, prefix))) {
      const list = postings.get(word) ?? [];
      if (list.length === 0) postings.set(word, list);
      for (const j of list) {
        if (seen[j] === i) continue;
        seen[j] = i;
        if (jaccard(sets[i] as Set<string>, sets[j] as Set<string>) >= threshold - 1e-9) groups.union(j, i);
      }
      list.push(i);
    }
  });
  const components = new Map<number, ClusterMember[]>();
  group.forEach((m, i) => {
    const root = groups.find(i);
    const list = components.get(root);
    if (list === undefined) components.set(root, [m]);
    else list.push(m);
  });
  const out: Cluster[] = [];
  for (const list of components.values()) {
    if (list.length < 2) continue;
    // Members are in seq order: the last is the newest.
    out.push({ keeper: list[list.length - 1] as ClusterMember, others: list.slice(0, -1) });
  }
  return out;
}

/** Each set's words ordered rarest first (in the group), ties by the word itself. */
function rarestFirst(sets: readonly Set<string>[]): string[][] {
  const frequency = new Map<string, number>();
  for (const set of sets) for (const w of set) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  return sets.map((set) =>
    [...set].sort((a, b) => (frequency.get(a) as number) - (frequency.get(b) as number) || (a < b ? -1 : 1)),
  );
}

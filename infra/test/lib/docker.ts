import { must } from "./must.js";

/**
 * Just enough of Docker's file formats for infra/test: a Dockerfile's stages and instructions, a
 * .dockerignore matcher, and what counts as a pinned image reference.
 */

export interface Instruction {
  /** Upper-cased keyword: FROM, RUN, COPY, ENV, … */
  cmd: string;
  /** `--name=value` options before the arguments (COPY --from, HEALTHCHECK --interval). */
  flags: Record<string, string>;
  /** The arguments after the flags, as written (continuations joined by a space). */
  args: string;
  /** The exec form (`["node", "…"]`) when the arguments are a JSON array. */
  exec?: string[];
}

export interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

/** Stages in order. Comments (and parser directives) are dropped, line continuations joined. */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let current = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("#")) continue; // inside a continuation too, as Docker does
    if (line.endsWith("\\")) {
      current += `${line.slice(0, -1).trim()} `;
      continue;
    }
    current += line;
    if (current.trim() !== "") logical.push(current.trim());
    current = "";
  }
  if (current.trim() !== "") logical.push(current.trim());

  const stages: Stage[] = [];
  for (const line of logical) {
    const instruction = parseInstruction(line);
    if (instruction.cmd === "FROM") {
      const [image, as, name] = instruction.args.split(/\s+/);
      if (image === undefined || (as !== undefined && as.toUpperCase() !== "AS"))
        throw new Error(`FROM: cannot read "${line}"`);
      stages.push({ image, name, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) throw new Error(`${instruction.cmd} before the first FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

const FLAG = /^--([a-z-]+)=(\S+)\s*/;

function parseInstruction(line: string): Instruction {
  const [, keyword, rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
  if (keyword === undefined) throw new Error(`cannot read "${line}"`);
  const flags: Record<string, string> = {};
  let args = rest;
  for (let m = FLAG.exec(args); m !== null; m = FLAG.exec(args)) {
    const [whole, name, value] = m;
    flags[must(name, `${keyword} flag name`)] = must(value, `${keyword} --${name} value`);
    args = args.slice(whole.length);
  }
  const instruction: Instruction = { cmd: keyword.toUpperCase(), flags, args };
  const exec = args.startsWith("CMD ") ? args.slice(4).trim() : args; // HEALTHCHECK … CMD [...]
  if (exec.startsWith("[")) instruction.exec = JSON.parse(exec) as string[];
  return instruction;
}

/** ENV of a stage (both `ENV A=1 B=2` and the older `ENV A 1`). */
export function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { cmd, args } of stage.instructions) {
    if (cmd !== "ENV") continue;
    if (!args.includes("=")) {
      const [name, ...value] = args.split(/\s+/);
      env[must(name, `ENV ${args}: a name`)] = value.join(" ");
      continue;
    }
    for (const pair of args.match(/[A-Za-z_][A-Za-z0-9_]*=("[^"]*"|\S*)/g) ?? []) {
      const at = pair.indexOf("=");
      env[pair.slice(0, at)] = pair.slice(at + 1).replace(/^"(.*)"$/, "$1");
    }
  }
  return env;
}

/** COPY's sources and destination (shell form; these files use no JSON form for COPY). */
export function copyPaths(instruction: Instruction): { sources: string[]; dest: string } {
  const parts = instruction.args.split(/\s+/);
  return { sources: parts.slice(0, -1), dest: must(parts.at(-1), `COPY ${instruction.args}: a destination`) };
}

/** The patterns of a .dockerignore, in order (comments and blank lines dropped). */
export function ignorePatterns(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

function patternRegex(pattern: string): RegExp {
  const clean = pattern.replace(/^\/+/, "").replace(/\/+$/, "");
  let source = "";
  for (let i = 0; i < clean.length; i++) {
    const c = clean.charAt(i);
    if (c === "*" && clean[i + 1] === "*") {
      const slash = clean[i + 2] === "/";
      source += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/**
 * Whether the build context leaves `path` out: the last pattern that matches the path or one of
 * its parent directories decides (`!` patterns put paths back), as Docker does.
 */
export function isIgnored(patterns: string[], path: string): boolean {
  const parts = path.replace(/^\.\//, "").split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let ignored = false;
  for (const raw of patterns) {
    const negated = raw.startsWith("!");
    const regex = patternRegex(negated ? raw.slice(1) : raw);
    if (prefixes.some((p) => regex.test(p))) ignored = !negated;
  }
  return ignored;
}

/** Images whose releases are numbered major.minor (PostgreSQL since 10: 17.6 is one release). */
const TWO_PART_VERSIONS = new Set(["postgres"]);

/**
 * An image reference pinned to one release: a digest, or a tag naming a full version (x.y.z, or
 * x.y for TWO_PART_VERSIONS; an optional variant such as -bookworm-slim may follow) or a MinIO
 * release stamp. Not `latest`, not a bare major or minor (`24`, `7.4-bookworm`), not untagged.
 */
export function isPinned(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const tag = /:([^/:]+)$/.exec(image)?.[1];
  if (tag === undefined) return false;
  const version = TWO_PART_VERSIONS.has(imageName(image)) ? "\\d+\\.\\d+" : "\\d+\\.\\d+\\.\\d+";
  return (
    new RegExp(`^v?${version}([-+][A-Za-z0-9.-]+)?$`).test(tag) ||
    /^RELEASE\.\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ$/.test(tag)
  );
}

/** `registry/name:tag` → `registry/name` (digest or tag dropped). */
export function imageName(image: string): string {
  return image.replace(/@sha256:[0-9a-f]+$/, "").replace(/:[^/:]+$/, "");
}

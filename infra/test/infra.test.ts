import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  type AppConfig,
  type AppName,
  HEALTH_PATH,
  PORT_VARIABLE,
  readApp,
  STAND_INS,
  standIn,
  unknownNames,
} from "./lib/apps.js";
import {
  copyPaths,
  ignorePatterns,
  imageName,
  isIgnored,
  isPinned,
  parseDockerfile,
  type Stage,
  stageEnv,
} from "./lib/docker.js";
import {
  appOf,
  byKind,
  checkApps,
  checkContainers,
  checkReferences,
  POD_NAME_STAND_IN,
  selected,
} from "./lib/k8s-checks.js";
import { schemaProblems } from "./lib/k8s-schema.js";
import { containersOf, type K8sObject, kustomize } from "./lib/kustomize.js";
import { must } from "./lib/must.js";

/**
 * infra/ checked offline (no Docker, no cluster here): the Dockerfiles, compose.yaml and the
 * Kubernetes manifests against the repository, the apps' configuration schemas and Kubernetes'
 * own schemas. infra/README.md lists what is checked and what cannot be.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const exists = (path: string) => existsSync(join(ROOT, path));
const APPS = ["api", "mcp", "web"] as const;
type App = (typeof APPS)[number];
const isApp = (name: string | undefined): name is App => APPS.some((a) => a === name);

const stagesOf = (app: App) => parseDockerfile(read(`infra/docker/${app}.Dockerfile`));
const dockerfile: Record<App, Stage[]> = { api: stagesOf("api"), mcp: stagesOf("mcp"), web: stagesOf("web") };
const firstStage = (app: App) => must(dockerfile[app][0], `${app}.Dockerfile: a stage`);
const finalStage = (app: App) => must(dockerfile[app].at(-1), `${app}.Dockerfile: a stage`);
const imageEnv = (app: AppName) => (app === "migrate" ? {} : stageEnv(finalStage(app)));
const ignore = ignorePatterns(read("infra/docker/api.Dockerfile.dockerignore"));
const version = (app: App) => JSON.parse(read(`apps/${app}/package.json`)).version as string;
const workspaces = (JSON.parse(read("package.json")).workspaces as string[]).flatMap((glob) => {
  const dir = glob.replace(/\/\*$/, "");
  return readdirSync(join(ROOT, dir))
    .map((name) => `${dir}/${name}`)
    .filter((path) => exists(`${path}/package.json`));
});
/** A required variable a schema needs whatever the file: the shared secret (a stand-in). */
const secrets = { PRIM_INTERNAL_SECRET: standIn("PRIM_INTERNAL_SECRET") };
const hostOf = (url: string) => new URL(url).host;

describe("Dockerfiles", () => {
  it("use the same .dockerignore list for the three images", () => {
    for (const app of APPS)
      expect(read(`infra/docker/${app}.Dockerfile.dockerignore`)).toBe(
        read("infra/docker/api.Dockerfile.dockerignore"),
      );
    for (const path of ["node_modules", "apps/web/.next", "packages/db/dist", ".git", "infra/k8s/base"]) {
      expect(isIgnored(ignore, path), path).toBe(true);
    }
  });

  it.each(APPS)("%s: pins its images; Node is the patch release the repository pins", (app) => {
    // The root devDependency `node` (npm's package: the Node that npm start and npm test run on).
    const pinned = JSON.parse(read("package.json")).devDependencies.node as string;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const names = new Set<string>();
    const nodeImages: string[] = [];
    for (const stage of dockerfile[app]) {
      if (!names.has(stage.image)) expect(isPinned(stage.image), stage.image).toBe(true);
      if (stage.name !== undefined) names.add(stage.name);
      if (imageName(stage.image) === "node") nodeImages.push(stage.image);
    }
    expect(nodeImages.length).toBeGreaterThan(0);
    for (const image of nodeImages) expect(image).toBe(`node:${pinned}-bookworm-slim`);
  });

  it.each(APPS)("%s: ships no copy of the pinned Node (the `node` devDependency)", (app) => {
    // Its install script fetches a Node binary (~150 MB): npm ci runs no install script, and the
    // prune to production dependencies removes the package, as a devDependency only.
    const manifest = JSON.parse(read("package.json"));
    expect(Object.keys(manifest.devDependencies)).toContain("node");
    expect(Object.keys(manifest.dependencies ?? {})).not.toContain("node");
    const build = firstStage(app);
    const runs = build.instructions.filter((x) => x.cmd === "RUN").map((x) => x.args);
    const ci = runs.filter((args) => /\bnpm ci\b/.test(args));
    expect(ci.length).toBeGreaterThan(0);
    for (const args of ci) expect(args).toMatch(/\bnpm ci\b[^&]*--ignore-scripts/);
    expect(runs.some((args) => /\bnpm (rebuild|install)\b/.test(args))).toBe(false);
    expect(runs.some((args) => /\bnpm prune --omit=dev\b/.test(args))).toBe(true);
  });

  it.each(APPS)("%s: copies files that exist and that the build context keeps", (app) => {
    const stages = dockerfile[app];
    const problems: string[] = [];
    stages.forEach((stage, i) => {
      for (const ins of stage.instructions.filter((x) => x.cmd === "COPY")) {
        const from = ins.flags.from;
        if (from !== undefined) {
          if (!stages.slice(0, i).some((s) => s.name === from)) problems.push(`COPY --from=${from}: no earlier stage`);
          continue;
        }
        for (const src of copyPaths(ins).sources.filter((s) => s !== ".")) {
          if (!exists(src)) problems.push(`COPY ${src}: missing`);
          else if (isIgnored(ignore, src)) problems.push(`COPY ${src}: left out by the .dockerignore`);
        }
      }
    });
    expect(problems).toEqual([]);
  });

  it.each(APPS)("%s: installs from every workspace's manifest, then keeps production dependencies only", (app) => {
    const [, ...rest] = dockerfile[app];
    const build = firstStage(app);
    const ci = build.instructions.findIndex((x) => x.cmd === "RUN" && /\bnpm ci\b/.test(x.args));
    const copied = build.instructions
      .slice(0, ci)
      .filter((x) => x.cmd === "COPY")
      .flatMap((x) => copyPaths(x).sources);
    for (const m of ["package.json", "package-lock.json", ...workspaces.map((w) => `${w}/package.json`)]) {
      expect(copied, `${m} before npm ci`).toContain(m);
    }
    const pruneAt = build.instructions.findIndex((x) => x.cmd === "RUN" && /npm prune --omit=dev/.test(x.args));
    const buildAt = build.instructions.findIndex((x) => x.cmd === "RUN" && /turbo run build/.test(x.args));
    expect(pruneAt).toBeGreaterThanOrEqual(buildAt);
    expect(buildAt).toBeGreaterThan(ci);
    const final = rest.at(-1);
    expect(final?.instructions.some((x) => x.cmd === "COPY" && x.flags.from === build.name)).toBe(true);
    expect(final?.instructions.some((x) => x.cmd === "RUN" && /npm (ci|install)/.test(x.args))).toBe(false);
  });

  it.each(APPS)("%s: runs as non-root, exposes the app's ports, checks its health route", (app) => {
    const final = finalStage(app);
    const user = final.instructions
      .filter((x) => x.cmd === "USER")
      .at(-1)
      ?.args.split(":")[0];
    expect(user).toBeDefined();
    expect(["root", "0"]).not.toContain(user);
    const config = readApp(app, { ...imageEnv(app), ...secrets });
    expect(unknownNames(app, imageEnv(app), config)).toEqual([]);
    const exposed = final.instructions
      .filter((x) => x.cmd === "EXPOSE")
      .flatMap((x) => x.args.split(/\s+/).map(Number));
    const ports = [config.ports.public, config.ports.internal].filter((p) => p !== undefined);
    expect(exposed.sort((a, b) => a - b)).toEqual(ports.sort((a, b) => a - b));
    const health = final.instructions.find((x) => x.cmd === "HEALTHCHECK");
    expect(health?.exec?.slice(-3)).toEqual([HEALTH_PATH[app], PORT_VARIABLE[app], String(config.ports.public)]);
  });

  it.each(APPS)("%s: the files CMD and HEALTHCHECK run are in the image", (app) => {
    const final = finalStage(app);
    const workdir = final.instructions.filter((x) => x.cmd === "WORKDIR").at(-1)?.args ?? "/";
    const words = final.instructions
      .filter((x) => x.cmd === "CMD" || x.cmd === "HEALTHCHECK")
      .flatMap((x) => x.exec ?? [])
      .flatMap((w) => w.split(/\s+/));
    const files = words.filter((w) => /\.m?js$|\/bin\/[a-z]+$/.test(w) && !w.startsWith("-"));
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const file of files) {
      const path = posix.relative("/app", posix.resolve(workdir, file));
      expect(exists(path), path).toBe(true);
      if (!path.startsWith("node_modules/")) expect(isIgnored(ignore, path), path).toBe(false);
    }
  });
});

describe("listen host", () => {
  it("the api and mcp images bind every interface (the apps bind loopback unless PRIM_LISTEN_HOST says)", () => {
    for (const app of ["api", "mcp"]) {
      expect(read(`infra/docker/${app}.Dockerfile`), app).toMatch(/^ENV PRIM_LISTEN_HOST=0\.0\.0\.0$/m);
      expect(read(`apps/${app}/src/start.ts`), app).toContain("host: env.PRIM_LISTEN_HOST");
    }
  });
});

/** The part of a Compose file (compose-spec) these tests read, after interpolation. */
interface ComposeService {
  image: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  /** A variable without a value (`NAME:`) is passed through from the shell. */
  environment?: Record<string, string | number | boolean | null>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: Record<string, unknown>;
}

describe("infra/compose.yaml", () => {
  const interpolate = (v: unknown): unknown =>
    typeof v === "string"
      ? v.replace(
          /\$\$|\$\{([A-Z0-9_]+)(:?-([^}]*))?\}/g,
          (m: string, name: string, dflt?: string, fallback?: string) => {
            if (m === "$$") return "$";
            if (dflt === undefined) throw new Error(`\${${name}}: give it a default (\${${name}:-…})`);
            return fallback ?? "";
          },
        )
      : Array.isArray(v)
        ? v.map(interpolate)
        : typeof v === "object" && v !== null
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, interpolate(x)]))
          : v;
  const compose = interpolate(parseYaml(read("infra/compose.yaml"))) as { services: Record<string, ComposeService> };
  const services = compose.services;
  const service = (name: string) => must(services[name], `compose.yaml: service ${name}`);
  const apps: Record<AppName, string> = { api: "api", mcp: "mcp", web: "web", migrate: "migrate" };
  /** A service's variables; those passed through from the shell (no value) get stand-ins. */
  const env = (name: string): Record<string, string> =>
    Object.fromEntries(
      Object.entries(service(name).environment ?? {}).map(([k, v]) => [k, v === null ? standIn(k) : String(v)]),
    );
  const configOf = (app: AppName) => readApp(app, { ...imageEnv(app), ...env(apps[app]) });
  const config: Record<AppName, AppConfig> = {
    api: configOf("api"),
    mcp: configOf("mcp"),
    web: configOf("web"),
    migrate: configOf("migrate"),
  };

  it("pins every image, and builds ours from the repository with our Dockerfiles", () => {
    for (const [name, s] of Object.entries(services)) {
      expect(isPinned(s.image), `${name}: ${s.image}`).toBe(true);
      if (s.build === undefined) continue;
      expect(resolve(ROOT, "infra", s.build.context)).toBe(resolve(ROOT));
      expect(exists(s.build.dockerfile), s.build.dockerfile).toBe(true);
      const app = /^infra\/docker\/(api|mcp|web)\.Dockerfile$/.exec(s.build.dockerfile)?.[1];
      if (!isApp(app)) throw new Error(`${name}: ${s.build.dockerfile} is none of our Dockerfiles`);
      expect(s.image, name).toBe(`prim/${app}:${version(app)}`);
    }
  });

  it.each(["api", "mcp", "web", "migrate"] as AppName[])("%s: sets only variables its schema knows", (app) => {
    expect(unknownNames(app, env(apps[app]), config[app])).toEqual([]);
  });

  it.each(APPS)("%s: publishes the port the app listens on, never the internal one", (app) => {
    const published = (service(app).ports ?? []).map((p) => p.split(":").map(Number));
    expect(published).toEqual([[config[app].ports.public, config[app].ports.public]]);
  });

  it("starts the apps once `prim migrate` (the api image) completed and the services they use are up", () => {
    expect(service("migrate").command).toEqual(["node", "packages/cli/bin/prim.js", "migrate"]);
    expect(service("migrate").build).toEqual(service("api").build);
    for (const app of APPS)
      expect(service(app).depends_on?.migrate).toEqual({ condition: "service_completed_successfully" });
    for (const [name, s] of Object.entries(services)) {
      for (const [target, { condition }] of Object.entries(s.depends_on ?? {})) {
        expect(services[target], `${name} → ${target}`).toBeDefined();
        if (condition !== "service_healthy") continue;
        const imageHealth = isApp(target) && finalStage(target).instructions.some((x) => x.cmd === "HEALTHCHECK");
        expect(services[target]?.healthcheck !== undefined || imageHealth, `${target}: a health check`).toBe(true);
      }
    }
  });

  it("gives the apps one shared secret, and addresses that agree", () => {
    const secret = (app: AppName) => config[app].env.PRIM_INTERNAL_SECRET;
    expect(secret("mcp")).toBe(secret("api"));
    expect(secret("web")).toBe(secret("api"));
    expect(config.mcp.urls.authUrl).toBe(config.api.urls.authUrl);
    expect(config.web.urls.authUrl).toBe(config.api.urls.authUrl);
    expect(config.mcp.urls.mcpResource).toBe(config.api.urls.mcpResource);
    expect(config.web.urls.dashboardUrl).toBe(config.api.urls.dashboardUrl);
    expect(config.web.urls.publicApiUrl).toBe(config.api.urls.publicApiUrl);
    expect(config.web.urls.mcpResource).toBe(config.api.urls.mcpResource);
    for (const app of ["mcp", "web"] as const)
      expect(config[app].urls.internalUrl).toBe(`http://api:${config.api.ports.internal}`);
    expect(config.api.env.PRIM_INTERNAL_HOST).toBe("0.0.0.0");
  });
});

describe("Kubernetes manifests (infra/k8s)", () => {
  const base = kustomize(join(ROOT, "infra/k8s/base"));
  const renders = ["base", "overlays/local", "overlays/production"].map((dir) => ({
    dir,
    objects: kustomize(join(ROOT, "infra/k8s", dir)),
  }));

  describe.each(renders)("$dir", ({ dir, objects }) => {
    it("is valid for Kubernetes v1.36 (its schemas, no unknown field), one object per name", () => {
      const problems = objects.flatMap((o) => schemaProblems(o).map((p) => `${o.kind}/${o.metadata?.name}${p}`));
      expect(problems).toEqual([]);
      const ids = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it("pins images, runs Prim as non-root, sets requests and limits", () => {
      expect(checkContainers(objects, isPinned)).toEqual([]);
      if (dir !== "base") return;
      for (const c of objects.flatMap(containersOf)) {
        const app = appOf(c);
        if (app !== undefined)
          expect(c.image).toBe(`prim/${app === "migrate" ? "api" : app}:${version(app === "migrate" ? "api" : app)}`);
      }
    });

    it("gives each app exactly the variables its schema knows, from existing keys, on its ports", () => {
      const { problems, apps } = checkApps(objects, base, imageEnv);
      expect(problems).toEqual([]);
      expect(apps.map((a) => a.app).sort()).toEqual(["api", "mcp", "migrate", "web"]);
    });

    it("points Services, the Ingress, policies and budgets at existing pods and ports", () => {
      expect(checkReferences(objects)).toEqual([]);
    });

    it("runs cells named after their pods, each PRIM_DATA_DIR on its volume claim; the Job migrates with the cell's image", () => {
      const { apps } = checkApps(objects, base, imageEnv);
      const cell = apps.find((a) => a.app === "api");
      expect(cell?.workload.kind).toBe("StatefulSet");
      expect(cell?.workload.spec.replicas).toBe(dir === "overlays/production" ? 3 : 1);
      // Each cell is its pod, reached by the others at its stable name under the governing Service.
      expect(cell?.config?.env.PRIM_CELL_ID).toBe(POD_NAME_STAND_IN);
      expect(cell?.config?.env.PRIM_CELL_URL).toBe(
        `http://${POD_NAME_STAND_IN}.${cell?.workload.spec.serviceName}:${cell?.config?.ports.internal}`,
      );
      const mount = cell?.container.volumeMounts.find((m: K8sObject) => m.mountPath === cell.config?.env.PRIM_DATA_DIR);
      expect(cell?.workload.spec.volumeClaimTemplates.map((v: K8sObject) => v.metadata.name)).toContain(mount?.name);
      const job = apps.find((a) => a.app === "migrate");
      expect(job?.workload.kind).toBe("Job");
      expect(job?.container.image).toBe(cell?.container.image);
      for (const a of apps.filter((x) => x.app === "mcp" || x.app === "web"))
        expect(a.workload.kind).toBe("Deployment");
    });

    it("makes the apps agree: one secret, addresses, the internal Service, the Ingress hosts", () => {
      const { apps } = checkApps(objects, base, imageEnv);
      const one = (app: AppName) =>
        must(
          apps.find((a) => a.app === app),
          `${dir}: the ${app} container`,
        );
      const configOf = (app: AppName) => must(one(app).config, `${dir}: the ${app} container's configuration`);
      const [api, mcp, web] = [configOf("api"), configOf("mcp"), configOf("web")] as const;
      const url = (config: AppConfig, name: string) => must(config.urls[name], `${dir}: ${name}`);
      const secretRef = (app: AppName) =>
        one(app).container.env.find((e: K8sObject) => e.name === "PRIM_INTERNAL_SECRET").valueFrom.secretKeyRef;
      expect(secretRef("mcp")).toEqual(secretRef("api"));
      expect(secretRef("web")).toEqual(secretRef("api"));
      expect([mcp.urls.authUrl, web.urls.authUrl]).toEqual([api.urls.authUrl, api.urls.authUrl]);
      expect(mcp.urls.mcpResource).toBe(api.urls.mcpResource);
      expect(web.urls.dashboardUrl).toBe(api.urls.dashboardUrl);
      expect(web.urls.publicApiUrl).toBe(api.urls.publicApiUrl);
      expect(web.urls.mcpResource).toBe(api.urls.mcpResource);
      for (const internalUrl of [url(mcp, "internalUrl"), url(web, "internalUrl")]) {
        const { hostname, port: internalPort } = new URL(internalUrl);
        const service = byKind(objects, "Service").find((s) => s.metadata.name === hostname);
        expect(selected(objects, service?.spec.selector)).toContain(one("api").workload);
        const port = service?.spec.ports.find((p: K8sObject) => p.port === Number(internalPort));
        expect(port?.targetPort).toBe("internal");
      }
      const ingress = must(byKind(objects, "Ingress")[0], `${dir}: an Ingress`);
      const routes = Object.fromEntries<string[]>(
        ingress.spec.rules.map((r: K8sObject) => [r.host, r.http.paths.map((p: K8sObject) => p.backend.service.name)]),
      );
      const serviceOf = (app: AppName) =>
        byKind(objects, "Service").filter(
          (s) => s.spec.clusterIP !== "None" && selected(objects, s.spec.selector).includes(one(app).workload),
        );
      const expected = [
        [url(api, "publicApiUrl"), "api"],
        [url(mcp, "mcpResource"), "mcp"],
        [url(web, "dashboardUrl"), "web"],
      ] as const;
      expect(Object.keys(routes).sort()).toEqual(expected.map(([u]) => hostOf(u)).sort());
      for (const [address, app] of expected) {
        expect(serviceOf(app).map((s) => s.metadata.name)).toContain(routes[hostOf(address)]?.[0]);
        expect(new URL(address).protocol).toBe(ingress.spec.tls === undefined ? "http:" : "https:");
      }
    });
  });

  it("base: the Secret holds clearly marked placeholders, and the apps refuse the required ones", () => {
    const secret = must(byKind(base, "Secret")[0], "base: a Secret");
    expect(Object.keys(secret.stringData).sort()).toEqual(Object.keys(STAND_INS).sort());
    for (const value of Object.values<string>(secret.stringData)) expect(value).toMatch(/^REPLACE_ME\b/);
    const env = { ...STAND_INS, PRIM_DATA_DIR: "/data" };
    for (const key of ["DATABASE_URL", "REDIS_URL", "PRIM_INTERNAL_SECRET", "PRIM_MASTER_KEY"]) {
      expect(() => readApp("api", { ...env, [key]: secret.stringData[key] }), key).toThrow(key);
    }
  });

  it("production: leaves the real Secret alone (no placeholder Secret in its output)", () => {
    const objectsOf = (dir: string) =>
      must(
        renders.find((r) => r.dir === dir),
        dir,
      ).objects;
    expect(byKind(objectsOf("overlays/production"), "Secret")).toEqual([]);
    const local = must(byKind(objectsOf("overlays/local"), "Secret")[0], "overlays/local: a Secret");
    expect(local.stringData.DATABASE_URL).not.toMatch(/REPLACE_ME/);
  });
});

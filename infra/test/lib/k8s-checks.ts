import { type AppConfig, type AppName, HEALTH_PATH, readApp, standIn, unknownNames } from "./apps.js";
import { imageName } from "./docker.js";
import { containersOf, type K8sObject } from "./kustomize.js";

/**
 * Cross-reference checks over one rendered set of manifests. Each returns problems as lines
 * ("Kind/name: what is wrong"), empty when all is well, so a failing test lists all of them.
 */
export const WORKLOADS = new Set(["Deployment", "StatefulSet", "Job"]);
const id = (o: K8sObject) => `${o.kind}/${o.metadata?.name}`;
const podLabels = (o: K8sObject): Record<string, string> => o.spec?.template?.metadata?.labels ?? {};

export function byKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

/** The Prim app a container runs, from its image (`…/prim/api`) and, for the Job, its command. */
export function appOf(container: K8sObject): AppName | undefined {
  const app = /(?:^|\/)prim\/(api|mcp|web)$/.exec(imageName(container.image))?.[1] as AppName | undefined;
  return app === "api" && (container.command ?? []).includes("migrate") ? "migrate" : app;
}

function matchesSelector(labels: Record<string, string>, selector: K8sObject | undefined): boolean {
  if (selector === undefined) return false;
  const plain = selector.matchLabels ?? (selector.matchExpressions === undefined ? selector : {});
  if (!Object.entries(plain).every(([k, v]) => labels[k] === v)) return false;
  return (selector.matchExpressions ?? []).every((e: K8sObject) =>
    e.operator === "In" ? e.values.includes(labels[e.key]) : e.operator === "Exists" ? e.key in labels : false,
  );
}

/** Workloads whose pods a selector picks (Service selectors are plain maps). */
export function selected(objects: K8sObject[], selector: K8sObject | undefined): K8sObject[] {
  return objects.filter((o) => WORKLOADS.has(o.kind) && matchesSelector(podLabels(o), selector));
}

/** A port reference (name or number) resolved against a workload's container ports. */
function containerPort(workload: K8sObject, ref: string | number): number | undefined {
  const ports = containersOf(workload).flatMap((c) => c.ports ?? []);
  return ports.find((p: K8sObject) => (typeof ref === "number" ? p.containerPort === ref : p.name === ref))
    ?.containerPort;
}

/** The Secret or ConfigMap `name`; a Secret an overlay deleted is managed outside: the base's keys. */
function source(objects: K8sObject[], base: K8sObject[], kind: string, name: string): K8sObject | undefined {
  const find = (list: K8sObject[]) => list.find((o) => o.kind === kind && o.metadata?.name === name);
  return find(objects) ?? (kind === "Secret" ? find(base) : undefined);
}

function value(o: K8sObject, key: string): string | undefined {
  if (o.kind === "Secret") {
    return (
      o.stringData?.[key] ?? (o.data?.[key] === undefined ? undefined : Buffer.from(o.data[key], "base64").toString())
    );
  }
  return o.data?.[key];
}

/** What a pod's name stands in as (a StatefulSet's first pod). */
export const POD_NAME_STAND_IN = "prim-api-0";

/** A container's environment as the kubelet would set it; placeholders become stand-ins. */
export function containerEnv(c: K8sObject, objects: K8sObject[], base: K8sObject[], problems: string[]) {
  const env: Record<string, string> = {};
  if (c.envFrom !== undefined) problems.push(`${c.name}: envFrom: list each variable (infra/README.md)`);
  for (const e of c.env ?? []) {
    if (e.value !== undefined) {
      // The kubelet expands $(NAME) from variables defined above it.
      env[e.name] = String(e.value).replace(/\$\(([A-Z0-9_]+)\)/g, (m, name: string) => env[name] ?? m);
      continue;
    }
    if (e.valueFrom?.fieldRef?.fieldPath === "metadata.name") {
      env[e.name] = POD_NAME_STAND_IN;
      continue;
    }
    const ref = e.valueFrom?.configMapKeyRef ?? e.valueFrom?.secretKeyRef;
    const kind = e.valueFrom?.configMapKeyRef ? "ConfigMap" : "Secret";
    if (ref === undefined) {
      problems.push(
        `${c.name}: ${e.name}: only value, fieldRef metadata.name, configMapKeyRef and secretKeyRef are checked`,
      );
      continue;
    }
    const from = source(objects, base, kind, ref.name);
    const v = from === undefined ? undefined : value(from, ref.key);
    if (from === undefined) problems.push(`${c.name}: ${e.name}: no ${kind} ${ref.name}`);
    else if (v === undefined && ref.optional !== true)
      problems.push(`${c.name}: ${e.name}: ${kind} ${ref.name} has no key ${ref.key}`);
    else if (v !== undefined) env[e.name] = v.startsWith("REPLACE_ME") ? standIn(ref.key) : v;
  }
  return env;
}

export interface AppContainer {
  workload: K8sObject;
  container: K8sObject;
  app: AppName;
  config?: AppConfig;
}

/** Each Prim container, its variables checked against its app's schema and its ports and probes. */
export function checkApps(objects: K8sObject[], base: K8sObject[], imageEnv: (app: AppName) => Record<string, string>) {
  const problems: string[] = [];
  const apps: AppContainer[] = [];
  for (const workload of objects.filter((o) => WORKLOADS.has(o.kind))) {
    for (const container of containersOf(workload)) {
      const app = appOf(container);
      if (app === undefined) continue;
      const where = `${id(workload)} ${container.name}`;
      const local: string[] = [];
      const env = containerEnv(container, objects, base, local);
      problems.push(...local.map((p) => `${id(workload)} ${p}`));
      const entry: AppContainer = { workload, container, app };
      apps.push(entry);
      try {
        entry.config = readApp(app, { ...imageEnv(app === "migrate" ? "api" : app), ...env });
      } catch (err) {
        problems.push(`${where}: the app refuses its environment: ${(err as Error).message}`);
        continue;
      }
      for (const name of unknownNames(app, env, entry.config))
        problems.push(`${where}: ${name} is not in ${app}'s schema`);
      if (app === "migrate") continue;
      const { public: http, internal } = entry.config.ports;
      const declared = (container.ports ?? []).map((p: K8sObject) => `${p.name}=${p.containerPort}`).sort();
      const expected = [`http=${http}`, ...(internal === undefined ? [] : [`internal=${internal}`])].sort();
      if (declared.join() !== expected.join()) {
        problems.push(`${where}: ports ${declared.join(", ")}, the app listens on ${expected.join(", ")}`);
      }
      for (const kind of ["livenessProbe", "readinessProbe", "startupProbe"]) {
        const probe = container[kind];
        if (probe === undefined) {
          if (kind !== "startupProbe") problems.push(`${where}: no ${kind}`);
          continue;
        }
        if (containerPort(workload, probe.httpGet?.port) !== http)
          problems.push(`${where}: ${kind} is not on the http port`);
        if (probe.httpGet?.path !== HEALTH_PATH[app]) problems.push(`${where}: ${kind} is not ${HEALTH_PATH[app]}`);
      }
    }
  }
  return { problems, apps };
}

/** Services, StatefulSets' governing Services, the Ingress, NetworkPolicies, PodDisruptionBudgets. */
export function checkReferences(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const services = byKind(objects, "Service");
  for (const s of services) {
    const pods = selected(objects, s.spec?.selector);
    if (pods.length === 0) problems.push(`${id(s)}: its selector matches no workload's pods`);
    for (const p of s.spec?.ports ?? []) {
      for (const w of pods) {
        if (containerPort(w, p.targetPort ?? p.port) === undefined) {
          problems.push(`${id(s)}: port ${p.name}: targetPort ${p.targetPort} is no container port of ${id(w)}`);
        }
      }
    }
  }
  for (const set of byKind(objects, "StatefulSet")) {
    const governing = services.find((s) => s.metadata.name === set.spec.serviceName);
    if (governing?.spec.clusterIP !== "None") problems.push(`${id(set)}: serviceName is no headless Service`);
    else if (!selected(objects, governing.spec.selector).includes(set)) {
      problems.push(`${id(set)}: its headless Service does not select it`);
    }
  }
  for (const ingress of byKind(objects, "Ingress")) {
    const hosts = new Set(ingress.spec.rules.map((r: K8sObject) => r.host));
    for (const tls of ingress.spec.tls ?? []) {
      for (const h of tls.hosts) if (!hosts.has(h)) problems.push(`${id(ingress)}: TLS host ${h} has no rule`);
    }
    for (const path of ingress.spec.rules.flatMap((r: K8sObject) => r.http.paths)) {
      const { name, port } = path.backend.service;
      const target = services.find((s) => s.metadata.name === name);
      const servicePort = target?.spec.ports.find((p: K8sObject) =>
        port.name === undefined ? p.port === port.number : p.name === port.name,
      );
      if (servicePort === undefined)
        problems.push(`${id(ingress)}: backend ${name}:${port.name ?? port.number} does not exist`);
      else if (servicePort.name === "internal") problems.push(`${id(ingress)}: exposes the internal invoke listener`);
    }
  }
  for (const policy of byKind(objects, "NetworkPolicy")) {
    const pods = selected(objects, policy.spec.podSelector);
    if (pods.length === 0) problems.push(`${id(policy)}: its podSelector matches no workload`);
    for (const rule of policy.spec.ingress ?? []) {
      for (const p of rule.ports ?? []) {
        if (pods.some((w) => containerPort(w, p.port) === undefined))
          problems.push(`${id(policy)}: port ${p.port} unknown`);
      }
      for (const from of rule.from ?? []) {
        if (from.podSelector && selected(objects, from.podSelector).length === 0) {
          problems.push(`${id(policy)}: a from podSelector matches no workload`);
        }
      }
    }
  }
  for (const pdb of byKind(objects, "PodDisruptionBudget")) {
    if (selected(objects, pdb.spec.selector).length === 0)
      problems.push(`${id(pdb)}: its selector matches no workload`);
  }
  return problems;
}

/** Every container: pinned image, requests and limits; Prim pods: non-root, no privilege escalation. */
export function checkContainers(objects: K8sObject[], isPinned: (image: string) => boolean): string[] {
  const problems: string[] = [];
  for (const w of objects.filter((o) => WORKLOADS.has(o.kind))) {
    const pod = w.spec.template.spec;
    for (const c of containersOf(w)) {
      if (!isPinned(c.image)) problems.push(`${id(w)} ${c.name}: image ${c.image} is not pinned to a version`);
      for (const kind of ["requests", "limits"]) {
        for (const r of ["cpu", "memory"])
          if (c.resources?.[kind]?.[r] === undefined) problems.push(`${id(w)} ${c.name}: no ${kind}.${r}`);
      }
      if (appOf(c) === undefined) continue;
      if (pod.securityContext?.runAsNonRoot !== true || pod.securityContext?.runAsUser === 0) {
        problems.push(`${id(w)}: pods must run as non-root`);
      }
      if (c.securityContext?.allowPrivilegeEscalation !== false)
        problems.push(`${id(w)} ${c.name}: privilege escalation`);
    }
  }
  return problems;
}

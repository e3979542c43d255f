import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { must } from "./must.js";

/**
 * A small, offline stand-in for `kustomize build` (no kustomize or kubectl binary here), for the
 * subset infra/k8s uses. A kustomization may only have:
 *   resources  files (every YAML document in them) and directories (rendered first)
 *   patches    `- path: file` whose documents are strategic-merge patches, matched to a resource by
 *              kind and metadata.name: maps merge key by key (`key: null` removes it); lists
 *              merge by their Kubernetes merge key where they have one (containers, env,
 *              volumes by name; volumeMounts by mountPath; ports by containerPort or port) and
 *              are replaced otherwise; a document with `$patch: delete` removes its resource
 *   replicas   `- name, count` on a Deployment or StatefulSet
 *   images     `- name, newName?, newTag?, digest?` on every container and init container
 *   namespace  set on every namespaced object
 * Anything else fails the render, so a field this code ignores is never silently passed over.
 */
export type K8sObject = Record<string, any>;

const ALLOWED = new Set(["apiVersion", "kind", "namespace", "resources", "patches", "replicas", "images"]);
const CLUSTER_SCOPED = new Set(["Namespace"]);

export function readYamlDocuments(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, "utf8")).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
    return doc.toJS() as K8sObject;
  });
}

export function kustomize(dir: string): K8sObject[] {
  const k = must(readYamlDocuments(join(dir, "kustomization.yaml"))[0], `${dir}/kustomization.yaml: a document`);
  for (const key of Object.keys(k)) {
    if (!ALLOWED.has(key))
      throw new Error(`${dir}/kustomization.yaml: "${key}" is not in the subset infra/test renders`);
  }
  let objects: K8sObject[] = [];
  for (const entry of k.resources ?? []) {
    const path = resolve(dir, entry);
    objects.push(...(statSync(path).isDirectory() ? kustomize(path) : readYamlDocuments(path)));
  }
  for (const patch of k.patches ?? []) {
    if (Object.keys(patch).join() !== "path") throw new Error(`${dir}: only "- path: file" patches are rendered`);
    for (const doc of readYamlDocuments(resolve(dir, patch.path))) objects = applyPatch(objects, doc, patch.path);
  }
  for (const { name, count, ...rest } of k.replicas ?? []) {
    if (Object.keys(rest).length > 0) throw new Error(`${dir}: replicas entries take name and count only`);
    const target = objects.find((o) => ["Deployment", "StatefulSet"].includes(o.kind) && o.metadata?.name === name);
    if (target === undefined) throw new Error(`${dir}: replicas: no Deployment or StatefulSet ${name}`);
    target.spec.replicas = count;
  }
  for (const image of k.images ?? []) {
    let used = false;
    for (const c of objects.flatMap(containersOf)) {
      const { name, tag, digest } = splitImage(c.image);
      if (name !== image.name) continue;
      used = true;
      const newTag = image.newTag ?? tag;
      c.image = `${image.newName ?? name}${image.digest ? `@${image.digest}` : newTag ? `:${newTag}` : digest}`;
    }
    if (!used) throw new Error(`${dir}: images: no container uses ${image.name}`);
  }
  if (k.namespace !== undefined) {
    for (const o of objects) if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
  }
  return objects;
}

function splitImage(image: string): { name: string; tag?: string; digest: string } {
  const [withTag, digest] = image.split("@");
  const m = /^(.*?)(?::([^/:]+))?$/.exec(must(withTag, `image ${image}`));
  return {
    name: must(m?.[1], `image ${image}: a name`),
    tag: m?.[2],
    digest: digest === undefined ? "" : `@${digest}`,
  };
}

/** Containers and init containers of a workload (Deployment, StatefulSet, Job), else none. */
export function containersOf(o: K8sObject): K8sObject[] {
  const spec = o.spec?.template?.spec;
  return spec === undefined ? [] : [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
}

function applyPatch(objects: K8sObject[], patch: K8sObject, file: string): K8sObject[] {
  const { $patch, ...body } = patch;
  const index = objects.findIndex((o) => o.kind === body.kind && o.metadata?.name === body.metadata?.name);
  if (index < 0) throw new Error(`${file}: no ${body.kind} ${body.metadata?.name} to patch`);
  if ($patch === "delete") return objects.filter((_, i) => i !== index);
  if ($patch !== undefined) throw new Error(`${file}: $patch: ${$patch} is not rendered`);
  const merged = [...objects];
  const patched = merge(objects[index], body, "", file);
  if (!isMap(patched)) throw new Error(`${file}: ${body.kind} ${body.metadata?.name}: the patch is no map`);
  merged[index] = patched;
  return merged;
}

const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  imagePullSecrets: "name",
};

const isMap = (v: unknown): v is K8sObject => typeof v === "object" && v !== null && !Array.isArray(v);

function merge(target: unknown, patch: unknown, field: string, file: string): unknown {
  if (isMap(patch)) {
    if (Object.keys(patch).some((k) => k.startsWith("$")))
      throw new Error(`${file}: patch directives are not rendered`);
    const out: K8sObject = isMap(target) ? structuredClone(target) : {};
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete out[key];
      else out[key] = merge(out[key], value, key, file);
    }
    return out;
  }
  if (Array.isArray(patch) && Array.isArray(target)) {
    const key =
      field === "ports" ? (patch.every((p) => "containerPort" in p) ? "containerPort" : "port") : MERGE_KEYS[field];
    if (key === undefined) return structuredClone(patch);
    const out = structuredClone(target);
    for (const item of patch) {
      const at = out.findIndex((t: K8sObject) => t[key] === item[key]);
      if (at >= 0) out[at] = merge(out[at], item, "", file);
      else out.push(structuredClone(item));
    }
    return out;
  }
  return structuredClone(patch);
}

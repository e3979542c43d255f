import { validate as appsV1Deployment } from "kubernetes-models/_schemas/IoK8sApiAppsV1Deployment";
import { validate as appsV1StatefulSet } from "kubernetes-models/_schemas/IoK8sApiAppsV1StatefulSet";
import { validate as batchV1Job } from "kubernetes-models/_schemas/IoK8sApiBatchV1Job";
import { validate as v1ConfigMap } from "kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap";
import { validate as v1Namespace } from "kubernetes-models/_schemas/IoK8sApiCoreV1Namespace";
import { validate as v1Secret } from "kubernetes-models/_schemas/IoK8sApiCoreV1Secret";
import { validate as v1Service } from "kubernetes-models/_schemas/IoK8sApiCoreV1Service";
import { validate as networkingV1Ingress } from "kubernetes-models/_schemas/IoK8sApiNetworkingV1Ingress";
import { validate as networkingV1NetworkPolicy } from "kubernetes-models/_schemas/IoK8sApiNetworkingV1NetworkPolicy";
import { validate as policyV1PodDisruptionBudget } from "kubernetes-models/_schemas/IoK8sApiPolicyV1PodDisruptionBudget";
import type { K8sObject } from "./kustomize.js";

/**
 * Kubernetes' own JSON schemas (OpenAPI definitions) of Kubernetes v1.36.0, as shipped by the npm
 * package kubernetes-models 5.1.0, pinned in the root package.json: its `_schemas/*` modules are
 * those schemas compiled by ajv into validate functions (types, required fields, enums, formats
 * such as quantities and int-or-string).
 *
 * The package merges in the definitions of APIs that older releases removed, so only the
 * kinds below, all served by v1.36, are accepted. Add a kind here when infra/k8s starts using it.
 */
type Validate = ((data: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };

const KINDS: Record<string, Validate> = {
  "v1/Namespace": v1Namespace,
  "v1/ConfigMap": v1ConfigMap,
  "v1/Secret": v1Secret,
  "v1/Service": v1Service,
  "apps/v1/Deployment": appsV1Deployment,
  "apps/v1/StatefulSet": appsV1StatefulSet,
  "batch/v1/Job": batchV1Job,
  "networking.k8s.io/v1/Ingress": networkingV1Ingress,
  "networking.k8s.io/v1/NetworkPolicy": networkingV1NetworkPolicy,
  "policy/v1/PodDisruptionBudget": policyV1PodDisruptionBudget,
};

interface Seen {
  path: string;
  read: Set<string>;
  iterated: boolean;
}

/**
 * Kubernetes' schemas leave `additionalProperties` open, so a misspelt field (`readinesProbe`)
 * passes them, while the API server refuses it (kubectl's strict field validation). To catch
 * those, the object is validated through proxies that record which properties the compiled
 * schema reads: a property it never reads in an object whose keys it never enumerates (maps such
 * as labels are enumerated) is unknown to the schema.
 */
function tracked(value: unknown, path: string, seen: Map<object, Seen>): unknown {
  if (typeof value !== "object" || value === null) return value;
  const record = seen.get(value) ?? { path, read: new Set<string>(), iterated: false };
  seen.set(value, record);
  return new Proxy(value, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== "string") return v;
      record.read.add(key);
      return Object.hasOwn(target, key) ? tracked(v, `${path}/${key}`, seen) : v;
    },
    has(target, key) {
      if (typeof key === "string") record.read.add(key);
      return Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      if (typeof key === "string") record.read.add(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    ownKeys(target) {
      record.iterated = true;
      return Reflect.ownKeys(target);
    },
  });
}

/** Problems of one object against the schema of its kind, as "path: message" lines. */
export function schemaProblems(o: K8sObject): string[] {
  const validate = KINDS[`${o.apiVersion}/${o.kind}`];
  if (validate === undefined) {
    return [`${o.apiVersion} ${o.kind}: not a kind infra/test validates (${Object.keys(KINDS).join(", ")})`];
  }
  const seen = new Map<object, Seen>();
  if (!validate(tracked(o, "", seen))) {
    // A failed validation may stop early: report its errors only, not fields it did not reach.
    return (validate.errors ?? []).map((e) => `${e.instancePath || "/"}: ${e.message}`);
  }
  const problems: string[] = [];
  for (const [target, record] of seen) {
    if (Array.isArray(target) || record.iterated) continue;
    for (const key of Object.keys(target)) {
      if (!record.read.has(key)) problems.push(`${record.path}/${key}: unknown field`);
    }
  }
  return problems;
}

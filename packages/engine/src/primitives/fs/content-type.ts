const TEXT = "; charset=utf-8";

/** Common extensions; anything else is served as `application/octet-stream`. */
const BY_EXTENSION: Readonly<Record<string, string>> = {
  txt: `text/plain${TEXT}`,
  log: `text/plain${TEXT}`,
  md: `text/markdown${TEXT}`,
  markdown: `text/markdown${TEXT}`,
  csv: `text/csv${TEXT}`,
  tsv: `text/tab-separated-values${TEXT}`,
  html: `text/html${TEXT}`,
  htm: `text/html${TEXT}`,
  css: `text/css${TEXT}`,
  js: `text/javascript${TEXT}`,
  mjs: `text/javascript${TEXT}`,
  cjs: `text/javascript${TEXT}`,
  ts: `text/plain${TEXT}`,
  tsx: `text/plain${TEXT}`,
  jsx: `text/plain${TEXT}`,
  py: `text/x-python${TEXT}`,
  rs: `text/plain${TEXT}`,
  go: `text/plain${TEXT}`,
  java: `text/plain${TEXT}`,
  c: `text/plain${TEXT}`,
  h: `text/plain${TEXT}`,
  sh: `text/x-shellscript${TEXT}`,
  sql: `application/sql${TEXT}`,
  json: `application/json${TEXT}`,
  jsonl: `application/jsonl${TEXT}`,
  ndjson: `application/x-ndjson${TEXT}`,
  xml: `application/xml${TEXT}`,
  yaml: `application/yaml${TEXT}`,
  yml: `application/yaml${TEXT}`,
  toml: `application/toml${TEXT}`,
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  ico: "image/vnd.microsoft.icon",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  wasm: "application/wasm",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  mp4: "video/mp4",
  webm: "video/webm",
  woff: "font/woff",
  woff2: "font/woff2",
};

/** The Content-Type a file is served with, guessed from its name's extension. */
export function contentTypeFor(name: string): string {
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return "application/octet-stream";
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? "application/octet-stream";
}

"use client";
import { type FormEvent, useState } from "react";
import { TextField } from "@/components/fields";
import { type Props, State, useView } from "./shared";

/** Recall: the memories that answer a query, best first. */
export function MemoryBrowser(props: Props) {
  const [query, setQuery] = useState("");
  const [asked, setAsked] = useState<string | null>(null);
  const found = useView<{ id: string; text: string; score: number }>(
    props,
    "memory.recall",
    { query: asked },
    asked !== null,
  );
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (query.trim() !== "") setAsked(query.trim());
  }
  return (
    <div className="mt-4 text-sm">
      <form onSubmit={submit} className="flex items-end gap-2">
        <TextField label="Recall" value={query} onChange={setQuery} className="flex-1" />
        <button type="submit" className="rounded border px-2 py-1">
          Search
        </button>
      </form>
      {asked !== null && <State query={found} empty="Nothing recalled." />}
      <ul className="mt-2 divide-y">
        {found.data?.data.map((m) => (
          <li key={m.id} className="py-1">
            {m.text} <span className="text-zinc-600">({m.score.toFixed(2)})</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
